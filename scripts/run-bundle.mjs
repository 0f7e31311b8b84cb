// The launcher behind packages/*/bin/*.js: runs a binary's production bundle (scripts/bundle.mjs;
// docs/footprint.md), the file the image ships, so every test that starts a binary through its
// bin/ launcher tests what ships. No fallback to dist/: a test passing on code that does not ship
// would prove nothing. In a checkout, a bundle missing or older than the compiled dist/ (after a
// bare `tsc -b`) is rebuilt first, in a child process, so the edit-compile-test loop needs no
// extra step. V8 flags come from NODE_OPTIONS (the manifest sets them per container).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const packages = fileURLToPath(new URL('../packages/', import.meta.url));
const builder = fileURLToPath(new URL('./bundle.mjs', import.meta.url));

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

/** Runs packages/<NAME>/bundle/<NAME>.mjs in this process, rebuilding it first when stale. */
export async function runBundle(NAME) {
  const bundle = `${packages}${NAME}/bundle/${NAME}.mjs`;
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
  await import(bundle);
}
