// A hand-written SVG bar chart: one panel of horizontal bars per figure.
const WIDTH = 760;
const LABEL_W = 190;
const BAR_H = 16;
const GAP = 4;
const PANEL_PAD = 34;
const HIGHLIGHT = 'ioredisson';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function formatValue(v) {
  if (v >= 1000) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(1);
  return v.toPrecision(2);
}

/**
 * Renders panels `{ title, unit, log, rows: [{ label, value, note? }] }` stacked vertically.
 * Rows without a finite value are listed with their note (e.g. "not run").
 */
export function barChart(panels, { title, subtitle } = {}) {
  let y = 48;
  const parts = [
    `<text x="12" y="22" class="h1">${esc(title ?? '')}</text>`,
    `<text x="12" y="38" class="sub">${esc(subtitle ?? '')}</text>`,
  ];
  for (const panel of panels) {
    y += 10;
    parts.push(`<text x="12" y="${y + 12}" class="h2">${esc(panel.title)}</text>`);
    y += PANEL_PAD - 10;
    const values = panel.rows.map((r) => r.value).filter((v) => Number.isFinite(v) && v > 0);
    const max = Math.max(...values, 1e-9);
    const min = Math.min(...values, max);
    const span = WIDTH - LABEL_W - 90;
    const lo = panel.log ? Math.log10(min) - 0.3 : 0;
    const scale = (v) => (panel.log ? ((Math.log10(v) - lo) / (Math.log10(max) - lo || 1)) * span : (v / max) * span);
    for (const row of panel.rows) {
      const mine = row.label === HIGHLIGHT;
      parts.push(`<text x="${LABEL_W - 8}" y="${y + BAR_H - 4}" class="label${mine ? ' me' : ''}" text-anchor="end">${esc(row.label)}</text>`);
      if (Number.isFinite(row.value) && row.value > 0) {
        const w = Math.max(2, scale(row.value));
        parts.push(`<rect x="${LABEL_W}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" class="${mine ? 'bar me' : 'bar'}"/>`);
        parts.push(`<text x="${(LABEL_W + w + 6).toFixed(1)}" y="${y + BAR_H - 4}" class="value">${formatValue(row.value)} ${esc(panel.unit)}</text>`);
      } else {
        parts.push(`<text x="${LABEL_W + 6}" y="${y + BAR_H - 4}" class="value">${esc(row.note ?? (row.value === 0 ? `0 ${panel.unit}` : 'n/a'))}</text>`);
      }
      y += BAR_H + GAP;
    }
    if (panel.log) parts.push(`<text x="${WIDTH - 12}" y="${y + 10}" class="sub" text-anchor="end">log scale</text>`);
    y += 8;
  }
  const height = y + 16;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">
<style>
  .h1 { font-size: 16px; font-weight: 600; fill: #222; }
  .h2 { font-size: 13px; font-weight: 600; fill: #333; }
  .sub { font-size: 11px; fill: #666; }
  .label { font-size: 12px; fill: #333; }
  .label.me { font-weight: 700; }
  .value { font-size: 11px; fill: #444; }
  .bar { fill: #9aa5b1; }
  .bar.me { fill: #d9534f; }
</style>
<rect width="100%" height="100%" fill="#fff"/>
${parts.join('\n')}
</svg>
`;
}
