import { CHART_STYLES } from "./chartStyles.js";

/**
 * The console's one stylesheet, served at /ui/style.css (cacheable: it changes only with the
 * version). System fonts only: nothing is fetched from anywhere. Light and dark follow the
 * browser's preference; tables scroll sideways on a phone instead of squeezing.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d2330; --muted: #5d6675; --line: #d9dde4;
  --head: #f3f5f8; --link: #0b5cad; --ok: #1f7a35; --warn: #9a6400; --bad: #b3261e;
  --unknown: #5d6675; --code: #f3f5f8; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171c; --fg: #e3e6eb; --muted: #9aa3b2; --line: #2c323c; --head: #1c2027;
    --link: #7db4f0; --ok: #5cc27a; --warn: #e0a83a; --bad: #f2766b; --unknown: #9aa3b2;
    --code: #1c2027; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header { display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; align-items: baseline;
  padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--head); }
header .brand { font-weight: 600; }
main { padding: .8rem 1rem 2rem; }
a { color: var(--link); }
h1 { font-size: 1.25rem; margin: .2rem 0 .6rem; overflow-wrap: anywhere; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
.muted, .note { color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { overflow-wrap: anywhere; min-width: 8rem; }
.status { font-weight: 600; white-space: nowrap; }
.status::before { content: ""; display: inline-block; width: .7em; height: .7em;
  border-radius: 50%; margin-right: .35em; background: currentColor; }
.s-OK { color: var(--ok); }
.s-WARN, .s-STUCK { color: var(--warn); }
.s-ERROR, .s-REWIND, .s-STOP, .s-STALL { color: var(--bad); }
.s-UNKNOWN { color: var(--unknown); }
form.inline { display: inline; margin: 0; }
form.filter { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: 0 0 .7rem; }
input, select, button { font: inherit; padding: .25rem .4rem; }
.pager { display: flex; gap: 1rem; margin: .6rem 0; flex-wrap: wrap; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 12.5px; }
pre { background: var(--code); padding: .5rem .7rem; overflow-x: auto; border-radius: 4px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.tag { display: inline-block; padding: 0 .35em; border-radius: 3px; border: 1px solid var(--line); }
${CHART_STYLES}`;
