/** The developer pages' one stylesheet (served as /developers/developers.css; the CSP forbids inline styles). */
export const DEVELOPERS_CSS =
  `
:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5360; --line: #d5dae1; --accent: #0b57d0; --code-bg: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); ` +
  `background: #fff; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; z-index: 1; }
.top { border-bottom: 1px solid var(--line); padding: .75rem 1.5rem; }
.top nav { display: flex; gap: 1.25rem; flex-wrap: wrap; }
a { color: var(--accent); }
a[aria-current="page"] { font-weight: 600; color: var(--fg); }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 2rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.5rem; margin-top: 2.5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; scroll-margin-top: 1rem; }
:target { background: #fff4c2; outline: 2px solid #c99a00; outline-offset: 2px; }
code { font: .92em/1.4 ui-monospace, SFMono-Regular, Menlo, ` +
  `Consolas, monospace; background: var(--code-bg); padding: ` +
  `0 .2em; border-radius: 3px; }
pre { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px; padding: .9rem; overflow-x: auto; }
pre code { background: none; padding: 0; }
.file, .auth, .codes { color: var(--muted); font-size: .92rem; }
.status, .summary { color: var(--muted); font-weight: normal; font-size: .95rem; margin-left: .5rem; }
.method { display: inline-block; min-width: 4.2rem; font-size: .8rem; font-weight: 700; color: #fff; background: ` +
  `#2f5d8a; border-radius: 4px; padding: .1rem .4rem; text-align: center; }
.req { color: #a3290f; font-size: .8rem; }
.toc { columns: 2 16rem; padding-left: 1.2rem; }
.toc.codes { columns: 3 12rem; }
.toc ul { padding-left: 1rem; }
dl { display: grid; grid-template-columns: 9rem 1fr; gap: .3rem 1rem; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; }
.error, .op, .schema { border-top: 1px solid var(--line); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .93rem; }
caption { text-align: left; font-weight: 600; padding-bottom: .25rem; }
th, td { border: 1px solid var(--line); padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--code-bg); }
`;
