// Bundles entry.mjs into one minified ES module under static/vendor/, named by the version of
// @codemirror/view, with the licences of everything bundled beside it. Run: npm ci && npm run build
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "..", "static", "vendor");
const lock = JSON.parse(readFileSync(join(here, "package-lock.json"), "utf8"));
const version = lock.packages["node_modules/@codemirror/view"].version;
const outfile = join(vendor, `codemirror-${version}.min.js`);

const result = await build({
  entryPoints: [join(here, "entry.mjs")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  legalComments: "none",
  metafile: true,
  outfile,
  banner: { js: `/* CodeMirror ${version} bundle for gradtrace (MIT; see codemirror-LICENSE.txt). Built by tools/editor. */` },
});

// one licence file naming every package with code in the bundle (tree-shaken ones left out)
const bundled = new Set();
const output = Object.values(result.metafile.outputs)[0];
for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
  const match = bytesInOutput > 0 && input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) bundled.add(match[1]);
}
const sections = [...bundled].sort().map((name) => {
  const root = join(here, "node_modules", name);
  const meta = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const licence = readFileSync(join(root, "LICENSE"), "utf8").trim();
  return `${name} ${meta.version} (${meta.license})\n\n${licence}`;
});
writeFileSync(
  join(vendor, "codemirror-LICENSE.txt"),
  `The bundle static/vendor/codemirror-${version}.min.js contains these packages:\n\n` +
    sections.join("\n\n" + "-".repeat(72) + "\n\n") + "\n",
);
const bytes = readFileSync(outfile).length;
console.log(`${outfile}: ${bytes.toLocaleString()} bytes from ${bundled.size} packages`);
