/** A V8 CPU profile (`node --cpu-prof`) summed up: self time by module and by function, printed. */
import fs from 'node:fs';
import path from 'node:path';

/** The newest `.cpuprofile` in `dir` (a --cpu-prof run's), summed up by module and by function, busiest first. */
export function summariseProfile(dir, whose, top = 25) {
  // The newest profile (the client's leaves one per timed upload).
  const file = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort((a, b) => fs.statSync(path.join(dir, a)).mtimeMs - fs.statSync(path.join(dir, b)).mtimeMs)
    .pop();
  if (!file) return console.warn(`no .cpuprofile in ${dir}`);
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const selfUs = new Map();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const where = (url) => {
    const clean = url.replace(/^file:\/\//, '');
    const nm = clean.lastIndexOf('node_modules/');
    if (nm >= 0) {
      const rest = clean.slice(nm + 'node_modules/'.length).split('/');
      return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    }
    if (clean.startsWith('node:')) return 'node:internal';
    return clean.includes('/packages/') ? clean.slice(clean.indexOf('/packages/') + 1) : clean;
  };
  const byFunction = new Map();
  const byModule = new Map();
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (!us) continue;
    const cf = node.callFrame;
    const fn = `${cf.functionName || '(anonymous)'}  ${cf.url ? `${where(cf.url)}:${cf.lineNumber + 1}` : '(native)'}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const mod = cf.url ? where(cf.url) : cf.functionName.startsWith('(') ? cf.functionName : '(native)';
    byModule.set(mod, (byModule.get(mod) ?? 0) + us);
  }
  const show = (title, map, n) => {
    console.log(`\n${title}`);
    for (const [name, us] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n))
      console.log(`${((us / total) * 100).toFixed(1).padStart(6)} %  ${(us / 1e6).toFixed(2).padStart(6)} s  ${name}`);
  };
  console.log(
    `\n${whose} CPU profile (main thread only; pool threads' hashing and writes are not in it): ${(total / 1e6).toFixed(1)} s sampled, ${path.join(dir, file)}`,
  );
  show('by module (self time)', byModule, 15);
  show('by function (self time)', byFunction, top);
}
