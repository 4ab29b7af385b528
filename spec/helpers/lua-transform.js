// Jest transformer: a .lua file becomes a module exporting its text,
// matching the `text` loader tsup uses for the published bundle.
module.exports = {
  process(source) {
    return { code: `module.exports = ${JSON.stringify(source)};` };
  },
};
