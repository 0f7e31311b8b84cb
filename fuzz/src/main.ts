// npm run fuzz -- [--seconds N] [--target packet|configmap|hosts] [--seed S] [--save] [--repro FILE]
//   --seconds N   per target (default 10)
//   --save        write inputs that reached new coverage into fuzz/corpus/<target>/ (to check in)
//   --repro FILE  run one input (a crash file) against --target and print what happens
// A failure writes the input to fuzz/crashes/<target>-<id> and exits 1.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fuzz, inputId } from './engine.js';
import { TARGETS } from './targets/index.js';

const root = fileURLToPath(new URL('../', import.meta.url));

function readCorpus(dir: string): Buffer[] {
  try {
    return readdirSync(dir)
      .sort()
      .map((f) => readFileSync(join(dir, f)));
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      target: { type: 'string' },
      seed: { type: 'string' },
      save: { type: 'boolean', default: false },
      repro: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`--seconds=${values.seconds}: want a positive number`);
  const names = values.target ? [values.target] : Object.keys(TARGETS);
  for (const n of names) if (!TARGETS[n]) throw new Error(`--target=${n}: one of ${Object.keys(TARGETS).join(', ')}`);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 32);

  if (values.repro) {
    const target = await TARGETS[names[0]!]!();
    const input = readFileSync(values.repro);
    try {
      await target.run(input);
      console.log(`${target.name}: ${values.repro} passes`);
      return 0;
    } catch (e) {
      console.log(`${target.name}: ${values.repro} fails: ${(e as Error).stack ?? String(e)}`);
      return 1;
    }
  }

  if (names.length > 1) {
    // one process per target, so that each loads (and reads coverage over) only its own code
    let status = 0;
    for (const name of names) {
      const args = [process.argv[1]!, `--target=${name}`, `--seconds=${seconds}`, `--seed=${seed}`, ...(values.save ? ['--save'] : [])];
      const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
      status = Math.max(status, r.status ?? 1);
    }
    return status;
  }

  let failed = false;
  for (const name of names) {
    const target = await TARGETS[name]!();
    const corpusDir = join(root, 'corpus', name);
    const r = await fuzz(target, { seconds, seed, corpus: readCorpus(corpusDir) });
    console.log(
      `${name}: ${r.execs} execs in ${r.seconds.toFixed(1)} s (${Math.round(r.execs / r.seconds)}/s), corpus ${r.corpus}, ${r.features} coverage features, ${r.added.length} new inputs, seed ${seed}`,
    );
    if (values.save && r.added.length) {
      mkdirSync(corpusDir, { recursive: true });
      for (const b of r.added) writeFileSync(join(corpusDir, inputId(b)), b);
    }
    if (r.failure) {
      failed = true;
      const dir = join(root, 'crashes');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${name}-${inputId(r.failure.input)}`);
      writeFileSync(file, r.failure.input);
      console.log(`${name}: FAILURE on input ${r.failure.input.toString('hex')}\n  ${r.failure.message}\n  saved to ${file}; repeat with: npm run fuzz -- --target ${name} --repro ${file}`);
    }
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`fuzz: ${(e as Error).message}`);
    process.exit(2);
  },
);
