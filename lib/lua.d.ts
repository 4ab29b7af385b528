/** Lua sources are imported as text (tsup's `text` loader, a jest transform in tests). */
declare module '*.lua' {
  const source: string;
  export default source;
}
