// The launcher behind packages/*/bin/*.js: runs a binary's production bundle (scripts/bundle.mjs;
// docs/footprint.md), the file the image ships, so every test that starts a binary through its
// bin/ launcher tests what ships. No fallback to dist/: a test passing on code that does not ship
// would prove nothing. In a checkout, a bundle missing or older than the compiled dist/ (after a
// bare `tsc -b`) is rebuilt first, in a child process, so the edit-compile-test loop needs no
// extra step. V8 flags come from NODE_OPTIONS (the manifest sets them per container).
// CommonJS, like the bundles and the launchers: an ES module anywhere on the way in would load
// node's ES module loader into every process (docs/footprint.md).
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const packages = join(__dirname, '..', 'packages') + '/';
const builder = join(__dirname, 'bundle.mjs');

/** Newest modification time of the compiled sources this bundle is made of (0: none here). */
function newestCompiled(NAME) {
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const pkg of [NAME, 'config', 'dns-client']) if (existsSync(`${packages}${pkg}/dist/src`)) walk(`${packages}${pkg}/dist/src`);
  return newest;
}

/** Runs packages/<NAME>/bundle/<NAME>.cjs in this process, rebuilding it first when stale. */
function runBundle(NAME) {
  const bundle = `${packages}${NAME}/bundle/${NAME}.cjs`;
  // its side file (modules loaded on first use): a bundle built before there was one is stale too
  const side = `${packages}${NAME}/bundle/${NAME}.lazy.cjs`;
  const compiled = existsSync(builder) ? newestCompiled(NAME) : 0;
  if (compiled > 0 && (!existsSync(bundle) || !existsSync(side) || statSync(bundle).mtimeMs < compiled)) {
    execFileSync(process.execPath, [builder, '--only', NAME], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!existsSync(bundle)) {
    process.stderr.write(`${NAME}: ${bundle} is missing: build it with \`npm run build\`\n`);
    process.exit(1);
  }
  require(bundle);
}

module.exports = { runBundle };
