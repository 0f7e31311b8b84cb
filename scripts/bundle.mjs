#!/usr/bin/env node
// The production build (docs/footprint.md): one self-contained CommonJS file per binary, bundled and
// tree-shaken by esbuild from what `tsc -b` wrote to dist/, runnable with plain `node` and no
// node_modules. Every byte of JavaScript a process loads stays in its heap (the script's source,
// and whatever its modules create when they load), so what is not bundled is memory saved in
// every replica of the pod.
//   node scripts/bundle.mjs [--only PKG] [--analyze]   (after tsc -b; `npm run build` runs both)
// Writes packages/<pkg>/bundle/<pkg>.cjs (+ .map, + .LEGAL.txt with the bundled licences) and
// <pkg>.lazy.cjs, the modules it loads only on first use (+ .map).
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import { pathToFileURL } from 'node:url';
import { dirname, join, relative } from 'node:path';
import * as esbuild from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(join(root, 'packages/kube-dns/package.json'));
export const BINARIES = ['kube-dns', 'dnsmasq-nanny', 'sidecar'];

/**
 * The API types kube-dns deserializes (list responses of the resources it watches, and the
 * Status of an error). client-node's ObjectSerializer maps every one of its 717 generated
 * model classes by name, which keeps all of them alive in any program that makes one API call
 * (about 10 MB of kube-dns's RSS, measured). We generate its type map with the models reachable from
 * these roots only: deserializing them gives the very same objects, and the other models are
 * tree-shaken away.
 */
const API_ROOTS = ['V1ServiceList', 'V1EndpointSliceList', 'V1PodList', 'V1NamespaceList', 'V1Status', 'V1WatchEvent'];

async function reachableModels(roots) {
  const genDir = join(dirname(require.resolve('@kubernetes/client-node')), 'gen');
  const all = await import(join(genDir, 'models', 'all.js'));
  const seen = new Set();
  const visit = (type) => {
    for (const m of type.matchAll(/[A-Za-z0-9_]+/g)) {
      const name = m[0];
      const cls = all[name];
      if (seen.has(name) || typeof cls?.getAttributeTypeMap !== 'function') continue;
      seen.add(name);
      for (const a of cls.getAttributeTypeMap()) visit(a.type);
      for (const sub of Object.values(cls.mapping ?? {})) visit(sub);
    }
  };
  roots.forEach(visit);
  return seen;
}

/** esbuild plugin: ObjectSerializer with a type map of the reachable models only (see above). */
function trimClientNodeModels() {
  let models;
  return {
    name: 'trim-client-node-models',
    setup(build) {
      // Each generated module ends in assignments to its class's statics (Model.mapping = ...),
      // which esbuild must assume to be side effects: it would keep every module imported at
      // all. They are not, so mark them side-effect free and only what is used stays. The same
      // holds for client-node's hand-written modules, which its index re-exports all of: exec,
      // attach, cp, port-forward, top (with ws, tar-fs and streamx) went once marked (the bundle
      // 1,169 -> 1,027 KB). None is imported for its side effects alone.
      build.onResolve({ filter: /^\.\.?\/.*\.js$/ }, async (args) => {
        if (args.pluginData === 'trim' || !/@kubernetes[\\/]client-node[\\/]dist[\\/]/.test(args.importer)) return undefined;
        const r = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: 'trim' });
        return r.errors.length > 0 ? { errors: r.errors } : { path: r.path, sideEffects: false };
      });
      build.onLoad({ filter: /@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/]models[\\/]ObjectSerializer\.js$/ }, async (args) => {
        models ??= await reachableModels(API_ROOTS);
        const src = await readFile(args.path, 'utf8');
        // drop `export * from '../models/X.js'` and `import { X } from '../models/X.js'` of
        // unreachable models, and their lines in `typeMap`
        const keep = (name) => models.has(name);
        let out = src
          .replace(/^export \* from '\.\.\/models\/([A-Za-z0-9_]+)\.js';\n/gm, (line, name) => (keep(name) ? line : ''))
          .replace(/^import \{ ([A-Za-z0-9_]+) \} from '\.\.\/models\/[A-Za-z0-9_]+\.js';\n/gm, (line, name) => (keep(name) ? line : ''))
          .replace(/^ {4}"([A-Za-z0-9_]+)": ([A-Za-z0-9_]+),\n/gm, (line, name) => (keep(name) ? line : ''));
        const left = [...out.matchAll(/^import \{ ([A-Za-z0-9_]+) \}/gm)].length;
        if (left !== models.size) throw new Error(`trim-client-node-models: ObjectSerializer.js kept ${left} imports for ${models.size} models: its layout changed, update scripts/bundle.mjs`);
        return { contents: out, loader: 'js' };
      });
    },
  };
}

/**
 * The generated API classes are whole: CoreV1Api alone is 412 request builders and as many
 * response readers, wrapped twice more (ObservableAPI, ObjectParamAPI), about 900 KB of source
 * in kube-dns's bundle for the handful of list calls it makes. A class cannot be tree-shaken
 * method by method, and every byte of a script's source stays in the heap, with a function
 * object for each method once the class is created. This plugin keeps, in those files, only
 * the methods whose name (without `WithHttpInfo`) appears in our own compiled code or in
 * client-node's hand-written part: what nothing can call by name is dropped.
 */
function trimClientNodeApis() {
  let used;
  const GEN = /@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/](apis[\\/][A-Za-z0-9]+Api\.js|types[\\/](ObservableAPI|ObjectParamAPI)\.js)$/;
  const namesIn = async (dir, filter) => {
    const text = [];
    for (const f of await readdir(dir, { recursive: true })) {
      if (f.endsWith('.js') && filter(f)) text.push(await readFile(join(dir, f), 'utf8'));
    }
    return new Set(text.join('\n').match(/[A-Za-z_$][\w$]*/g));
  };
  const usedNames = async () => {
    const ours = await Promise.all(BINARIES.concat('config', 'dns-client').map((p) => namesIn(join(root, 'packages', p, 'dist', 'src'), () => true)));
    const clientNode = dirname(require.resolve('@kubernetes/client-node'));
    const theirs = await namesIn(clientNode, (f) => !/^gen[\\/]/.test(f));
    return new Set([...ours.flatMap((s) => [...s]), ...theirs]);
  };
  return {
    name: 'trim-client-node-apis',
    setup(build) {
      build.onLoad({ filter: GEN }, async (args) => {
        used ??= await usedNames();
        const lines = (await readFile(args.path, 'utf8')).split('\n');
        const out = [];
        let inClass = false;
        let chunk = [];
        for (const line of lines) {
          if (!inClass) {
            out.push(line);
            inClass = /^export class [A-Za-z0-9_]+ /.test(line) && line.endsWith('{');
            continue;
          }
          if (line === '}') {
            if (chunk.length > 0) throw new Error(`trim-client-node-apis: ${args.path}: a class ends inside a member: its layout changed, update scripts/bundle.mjs`);
            out.push(line);
            inClass = false;
            continue;
          }
          // a member is its doc comment, its first line at four spaces, and everything up to
          // the next line that is a closing brace at four spaces
          chunk.push(line);
          if (line !== '    }') continue;
          const head = chunk.find((l) => /^ {4}(async )?[A-Za-z_$][\w$]*\(/.test(l));
          if (!head) throw new Error(`trim-client-node-apis: ${args.path}: a class member without a method line: its layout changed, update scripts/bundle.mjs`);
          const name = head.match(/^ {4}(?:async )?([A-Za-z_$][\w$]*)\(/)[1];
          if (name === 'constructor' || used.has(name.replace(/WithHttpInfo$/, ''))) out.push(...chunk);
          chunk = [];
        }
        if (inClass) throw new Error(`trim-client-node-apis: ${args.path}: a class does not end: its layout changed, update scripts/bundle.mjs`);
        return { contents: out.join('\n'), loader: 'js' };
      });
    },
  };
}

/**
 * esbuild plugin: the version modules read their package.json next to dist/ at run time; a bundle
 * has no package.json beside it, so the file's contents are inlined at build time instead.
 */
function inlinePackageJson(pkg) {
  const READ = "readFileSync(new URL('../../package.json', import.meta.url), 'utf8')";
  return {
    name: 'inline-package-json',
    setup(build) {
      build.onLoad({ filter: /[\\/]dist[\\/]src[\\/]version\.js$/ }, async (args) => {
        if (!args.path.startsWith(join(root, 'packages', pkg, 'dist', 'src'))) return undefined;
        const src = await readFile(args.path, 'utf8');
        if (!src.includes(READ)) throw new Error(`inline-package-json: ${args.path} no longer reads ${READ}: update scripts/bundle.mjs`);
        const json = await readFile(join(root, 'packages', pkg, 'package.json'), 'utf8');
        return { contents: src.replaceAll(READ, JSON.stringify(json)), loader: 'js' };
      });
    },
  };
}

/**
 * esbuild plugin: node-fetch 2 (client-node's HTTP client) takes `Url.URL || whatwgUrl.URL`, so
 * on Node it never uses whatwg-url, yet loading it parses tr46's Unicode mapping table (about
 * 250 KB of JSON) at start-up. It gets a module that hands over Node's own URL instead.
 */
function nodeUrlForWhatwgUrl() {
  return {
    name: 'node-url-for-whatwg-url',
    setup(build) {
      build.onResolve({ filter: /^whatwg-url$/ }, (args) => {
        if (!/[\\/]node-fetch[\\/]/.test(args.importer)) return undefined;
        return { path: 'whatwg-url', namespace: 'node-url' };
      });
      build.onLoad({ filter: /.*/, namespace: 'node-url' }, () => ({
        contents: "const { URL, URLSearchParams } = require('node:url'); module.exports = { URL, URLSearchParams };",
        loader: 'js',
      }));
    },
  };
}

/**
 * Built-ins an importer only calls on paths our programs never take: the importer gets a module
 * of functions that require the built-in on their first call (noted in the same list as
 * LAZY_REQUIRES' loads). execa imports v8's `serialize` for the IPC channel, which the nanny never
 * opens (v8 is 0.3 MB of a bare node's RSS). An import of a name that is not a function of the
 * built-in fails the build (no such export).
 */
const LAZY_BUILTINS = [{ id: 'node:v8', from: /[\\/]node_modules[\\/]execa[\\/]/ }];

/**
 * Source of `load()`, which evaluates `get` (a module's source expression) once, on the first
 * call, and notes `label` in a global list so a test can see what a serving process ended up
 * loading (lazy-modules.test.ts of each package). Shared by the stand-ins of both plugins.
 */
const lazyLoader = (label, get) =>
  `let real;\nconst load = () => (real ??= ((globalThis[Symbol.for('kube-dns.lazy-loaded')] ??= []).push(${JSON.stringify(label)}), ${get}));`;

function lazyBuiltins() {
  return {
    name: 'lazy-builtins',
    setup(build) {
      build.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
        if (args.namespace !== 'file' || !isBuiltin(args.path)) return undefined;
        const id = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
        if (!LAZY_BUILTINS.some((r) => r.id === id && r.from.test(args.importer))) return undefined;
        // side-effect free: the functions nobody imports are dropped with the rest of the unused code
        return { path: id, namespace: 'lazy-builtin', sideEffects: false };
      });
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
        const real = require(args.path);
        const functions = Object.keys(real).filter((n) => typeof real[n] === 'function');
        const lines = [
          lazyLoader(args.path, `require(${JSON.stringify(args.path)})`),
          'export default /* @__PURE__ */ new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() });',
          ...functions.map((n) => `export function ${n}(...argv) { return load().${n}.apply(this, argv); }`),
        ];
        return { contents: lines.join('\n'), loader: 'js', resolveDir: root };
      });
    },
  };
}

/**
 * Modules a dependency requires at load but only calls on paths our programs never take: each
 * such require() gets a stand-in that loads the real module on first use (a property read, a
 * call, `new`), so a process that never takes the path never evaluates it. Measured with the
 * sidecar's express + prom-client alone: mime-types (it parses mime-db's 2,000 types into
 * lookup tables at load; express only needs them for res.type()/sendFile(), and our handlers set
 * Content-Type themselves) 1.3 MB, prom-client's Pushgateway (with node's https and tls) and
 * body-parser's reader (with zlib) 1.1 MB. A rule applies only if the importer never touches the
 * module's exports at load: the stand-in would then load it at once, correct but no saving
 * (lazy-modules.test.ts of kube-dns and the sidecar asks every endpoint, then checks that none was
 * loaded). `target`: what the importer holds, `object` (a namespace) or `function` (a function
 * or a class) for a require() in a CommonJS module; `exports` for an ES module's import, which
 * esbuild turns into property reads on the module (see lazyRequires).
 */
const CLIENT_NODE = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/][a-z_]+\.js$/;
const EXPRESS = (file) => new RegExp(`[\\\\/]node_modules[\\\\/]express[\\\\/]lib[\\\\/]${file}\\.js$`);
const LAZY_REQUIRES = [
  { module: 'mime-types', from: /[\\/]node_modules[\\/](express|send|accepts|type-is|form-data)[\\/]/, target: 'object' },
  { module: './lib/pushgateway', from: /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/, target: 'function' },
  // body-parser's reader, and with it node's zlib (it asks `'createZstdDecompress' in zlib` at
  // load): only the body parsers call it, and no handler of ours reads a request body
  { module: '../read', from: /[\\/]node_modules[\\/]body-parser[\\/]lib[\\/]types[\\/]/, target: 'function' },
  // node's crypto (2.2 MB in a bare node: OpenSSL's tables and two dozen modules): express's ETag
  // (the sidecar turns ETags off) and signed cookies (never used) call it, and nothing else of the
  // sidecar's or the nanny's does
  { module: 'crypto', from: /[\\/]node_modules[\\/](etag|cookie-signature)[\\/]/, target: 'object' },
  // What else express loads for request and response helpers our handlers never call: qs (with
  // side-channel and object-inspect: the 'extended' query parser and body parser), content
  // negotiation (req.accepts, res.format), req.is, req.range, res.sendFile / res.download /
  // res.attachment (send, content-disposition) and express.static; and prom-client's Summary
  // quantiles (tdigest), which no metric of ours is. With the three after them, about 150 KB of
  // the sidecar's bundle.
  { module: 'qs', from: /[\\/]node_modules[\\/](express[\\/]lib|body-parser[\\/]lib[\\/]types)[\\/]/, target: 'object' },
  { module: 'accepts', from: EXPRESS('request'), target: 'function' },
  { module: 'type-is', from: /[\\/]node_modules[\\/](express[\\/]lib[\\/]request|body-parser[\\/]lib[\\/]utils)\.js$/, target: 'function' },
  { module: 'range-parser', from: EXPRESS('request'), target: 'function' },
  { module: 'send', from: EXPRESS('response'), target: 'function' },
  { module: 'content-disposition', from: EXPRESS('response'), target: 'function' },
  { module: 'serve-static', from: EXPRESS('express'), target: 'function' },
  { module: './timeWindowQuantiles', from: /[\\/]node_modules[\\/]prom-client[\\/]lib[\\/]summary\.js$/, target: 'function' },
  // prom-client's own default-metrics registration (we register them one by one: @kube-dns/config's
  // process-metrics), its cluster aggregator, and OpenTelemetry's API, read only for exemplars
  { module: './lib/defaultMetrics', from: /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/, target: 'function' },
  { module: './lib/cluster', from: /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/, target: 'function' },
  { module: '@opentelemetry/api', from: /[\\/]node_modules[\\/]prom-client[\\/]lib[\\/]/, target: 'object' },
  // client-node's ways to reach an API server that kube-dns in a pod never takes: the legacy
  // GCP and Azure auth providers (jsonpath-plus), OIDC (openid-client with oauth4webapi), and a
  // kubeconfig's proxy-url (socks-proxy-agent with socks and ip-address; hpagent), all used in
  // methods only. About 160 KB of kube-dns's bundle. js-yaml stays: every --kubecfg-file reads
  // it at start, and the first stand-in used reads the whole side file (below), which then costs
  // more than it saves (kube-dns alone, 10 Services: 51.2 -> 51.8 MB with js-yaml held back,
  // 50.4 without, four runs each). kube-proxy-url.test.ts runs the bundle through both proxies.
  { module: 'jsonpath-plus', from: CLIENT_NODE, target: 'exports' },
  { module: 'openid-client', from: CLIENT_NODE, target: 'exports' },
  { module: 'socks-proxy-agent', from: CLIENT_NODE, target: 'exports' },
  { module: 'hpagent', from: CLIENT_NODE, target: 'exports' },
];
const LAZY_FILTER = new RegExp(`^(${LAZY_REQUIRES.map((r) => r.module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);

/**
 * The side file of a binary's bundle: the modules held back until first use (LAZY_REQUIRES) are
 * not in the bundle itself but in `<binary>.lazy.cjs` next to it, each behind a function that
 * evaluates it on the first call. Their source is read only by a process that takes such a path:
 * otherwise it would sit in every process's heap (the bundle's source string stays for the life
 * of the process), mime-db's table and iconv-lite's code pages (under body-parser's reader) alone
 * being about 650 KB of it, 1.4 MB of a sidecar's RSS (measured).
 */
const lazyFile = (pkg) => `${pkg}.lazy.cjs`;

function lazyRequires(pkg, heldBack) {
  return {
    name: 'lazy-requires',
    setup(build) {
      build.onResolve({ filter: /\.lazy\.cjs$/ }, (args) => (args.path === `./${lazyFile(pkg)}` ? { path: args.path, external: true } : undefined));
      build.onResolve({ filter: LAZY_FILTER }, async (args) => {
        if (args.pluginData === 'lazy') return undefined;
        const rule = LAZY_REQUIRES.find((r) => r.module === args.path && r.from.test(args.importer) && args.kind === (r.target === 'exports' ? 'import-statement' : 'require-call'));
        if (!rule) return undefined;
        const real = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: 'lazy' });
        if (real.errors.length > 0) return { errors: real.errors };
        // the path only names the stand-in in the bundle (esbuild takes a name ending in .mjs for
        // an ES module, which a stand-in is not); pluginData carries where the module is (a
        // built-in of node's stays a name, required at run time) and its key in the side file
        const where = real.external ? args.path : real.path;
        const key = real.external ? `node:${args.path}` : relative(root, real.path);
        return { path: key.replace(/\.mjs$/, '.mjs (stand-in)'), namespace: 'lazy-require', pluginData: { target: rule.target, real: where, key } };
      });
      build.onLoad({ filter: /.*/, namespace: 'lazy-require' }, async (args) => {
        const { target: kind, real, key } = args.pluginData;
        // a built-in of node's is required by name; a module of ours comes from the side file
        const external = !real.startsWith('/');
        if (!external) heldBack.set(key, real);
        // a side file left behind when the bundle was copied fails with a message that says so
        const side = JSON.stringify(`./${lazyFile(pkg)}`);
        const get = external
          ? `require(${JSON.stringify(real)})`
          : `(() => { let lazySide; try { lazySide = require(${side}); } catch (e) { throw new Error(${JSON.stringify(`${lazyFile(pkg)} must sit next to ${pkg}.cjs (the modules it loads on first use): `)} + e.message); } return lazySide[${JSON.stringify(key)}](); })()`;
        // each load is also noted in a global list, so a test can see what a serving process
        // ended up loading (packages/*/test/lazy-modules.test.ts)
        const loader = lazyLoader(key, get);
        if (kind === 'exports') {
          // An ES module's `import * as m` / `import { x }` of a CommonJS module becomes, in the
          // bundle, a copy of the module's own property names whose values are read on access:
          // a Proxy has no names to copy, so the stand-in has a getter for each export of the
          // real module, listed here at build time.
          let mod;
          try {
            mod = createRequire(real)(real);
          } catch (e) {
            // an ES module: node 20 refuses to require() one, later nodes one with top-level await
            if (e.code !== 'ERR_REQUIRE_ESM' && e.code !== 'ERR_REQUIRE_ASYNC_MODULE') throw e;
            mod = await import(pathToFileURL(real).href);
          }
          const names = Object.keys(mod).filter((n) => n !== '__esModule');
          if (names.length === 0) throw new Error(`lazy-requires: ${key} exports nothing to stand in for: update scripts/bundle.mjs`);
          const props = names.map((n) => `${JSON.stringify(n)}: { get: () => load()[${JSON.stringify(n)}], enumerable: true }`);
          return { contents: `${loader}\nmodule.exports = Object.defineProperties({}, { __esModule: { value: true }, ${props.join(', ')} });`, resolveDir: root, loader: 'js' };
        }
        // an object target for a namespace, a function target for a function or a class (new)
        const target = kind === 'function' ? 'function lazy() {}' : '{}';
        return {
          contents: `${loader}
module.exports = new Proxy(${target}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  apply: (_, self, argv) => Reflect.apply(load(), self, argv),
  construct: (_, argv) => Reflect.construct(load(), argv),
});`,
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}

export async function bundle(pkg) {
  const outfile = join(root, 'packages', pkg, 'bundle', `${pkg}.cjs`);
  const heldBack = new Map();
  const result = await esbuild.build({
    entryPoints: [join(root, 'packages', pkg, 'dist', 'src', 'main.js')],
    outfile,
    bundle: true,
    platform: 'node',
    // CommonJS, not ESM: a program whose entry is an ES module also loads node's ES module loader
    // (about 1 MB of RSS per process, measured); the launchers in bin/ are CommonJS for the same
    // reason. Our sources stay ES modules: esbuild turns their imports into require() calls.
    format: 'cjs',
    target: 'node20',
    // Whitespace and syntax only: function and class names stay readable in stack traces and
    // logs; the source map (not loaded unless --enable-source-maps) gives the original lines.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'external',
    legalComments: 'external',
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [trimClientNodeModels(), trimClientNodeApis(), nodeUrlForWhatwgUrl(), lazyRequires(pkg, heldBack), inlinePackageJson(pkg), lazyBuiltins()],
  });
  // the side file (lazyFile above): written for every binary, empty when nothing is held back,
  // so that every image ships the same set of files
  const entries = [...heldBack].sort(([a], [b]) => a.localeCompare(b)).map(([key, real]) => `  ${JSON.stringify(key)}: () => require(${JSON.stringify(real)}),`);
  const side = await esbuild.build({
    stdin: { contents: `module.exports = {\n${entries.join('\n')}\n};\n`, resolveDir: root, sourcefile: lazyFile(pkg), loader: 'js' },
    outfile: join(dirname(outfile), lazyFile(pkg)),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'external',
    legalComments: 'external',
    write: false,
    logLevel: 'warning',
    plugins: [nodeUrlForWhatwgUrl()],
  });
  // Written to a temporary name and renamed: a launcher starting meanwhile (or rebuilding the
  // same bundle at the same moment, see bin/) never reads half a file.
  await mkdir(dirname(outfile), { recursive: true });
  // one licence file per binary: the side file's notices go after the bundle's
  const isLegal = (f) => f.path.endsWith('.LEGAL.txt');
  const sideLegal = side.outputFiles.find(isLegal)?.text.replace(/^Bundled license information:\n/, '');
  const files = [...result.outputFiles, ...side.outputFiles.filter((f) => !isLegal(f))].map((f) => ({ path: f.path, contents: f.contents }));
  if (sideLegal) {
    const legal = files.find(isLegal);
    const text = `${legal ? new TextDecoder().decode(legal.contents) : 'Bundled license information:\n'}\nIn ${lazyFile(pkg)} (loaded on first use):\n${sideLegal}`;
    if (legal) legal.contents = new TextEncoder().encode(text);
    else files.push({ path: `${outfile}.LEGAL.txt`, contents: new TextEncoder().encode(text) });
  }
  for (const f of files) {
    const tmp = `${f.path}.${process.pid}.tmp`;
    await writeFile(tmp, f.contents);
    await rename(tmp, f.path);
  }
  const size = result.outputFiles.find((f) => f.path === outfile).contents.length;
  return { pkg, outfile, size, metafile: result.metafile };
}

async function main() {
  const only = process.argv.indexOf('--only');
  for (const pkg of only >= 0 ? [process.argv[only + 1]] : BINARIES) {
    if (!BINARIES.includes(pkg)) throw new Error(`--only: not a binary: ${pkg} (one of ${BINARIES.join(', ')})`);
    const b = await bundle(pkg);
    process.stdout.write(`bundle: ${b.outfile.slice(root.length)} ${(b.size / 1024).toFixed(0)} KB\n`);
    if (process.argv.includes('--analyze')) process.stdout.write(await esbuild.analyzeMetafile(b.metafile, { verbose: false }));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(`bundle failed: ${e.message}`);
    process.exit(1);
  });
}
