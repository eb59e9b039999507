/**
 * The history's SVG (README "Web console"): strokes and labels take the theme's variables, so
 * the lines read in light and dark alike; classes only, as the CSP allows no inline style.
 */
export const CHART_STYLES = `
svg.spark { width: 4.5rem; height: 1.4rem; vertical-align: middle; overflow: visible; }
svg path, .chart .line { fill: none; stroke: var(--link); stroke-width: 1.5;
  stroke-linejoin: round; stroke-linecap: round; vector-effect: non-scaling-stroke; }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart text { fill: var(--muted); font-size: 10px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr));
  gap: .4rem 1rem; }
.chart { margin: 0; }
.chart figcaption { color: var(--muted); font-size: 12.5px; }
.chart svg { width: 100%; height: auto; }
`;
