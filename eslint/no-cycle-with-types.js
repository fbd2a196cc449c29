// @ts-check
// import-x/no-cycle leaves type-only imports out (they vanish at run time), and it has no option to follow them.
// A cycle of types still ties its modules together: none of them can be read, moved or tested without the others.
// This rule follows every relative import, `import type` and `export … from` included, and reports an import
// through which the linted file reaches itself again.
import ts from 'typescript';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Each file's relative imports, resolved to files; kept while the file's modification time stays the same. */
const importsByFile = new Map();

/** The source file a relative specifier names, or null (a package, or nothing there). */
function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const target = path.resolve(path.dirname(from), specifier);
  // NodeNext names a source by its output (`./x.js`); a bundler's sources (the dashboard's) may leave the extension out.
  const candidates = target.endsWith('.js')
    ? [target.slice(0, -3) + '.ts', target.slice(0, -3) + '.tsx', target]
    : [target, `${target}.ts`, `${target}.tsx`, path.join(target, 'index.ts'), path.join(target, 'index.tsx')];
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not there: the next candidate.
    }
  }
  return null;
}

function importsOf(file) {
  let modified;
  try {
    modified = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const known = importsByFile.get(file);
  if (known && known.modified === modified) return known.targets;
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const targets = [...new Set(importedFiles.map(({ fileName }) => resolveImport(file, fileName)).filter((target) => target !== null))];
  importsByFile.set(file, { modified, targets });
  return targets;
}

/** The files from `start` to `goal` along imports (both ends included), or null when `goal` cannot be reached. */
function importPath(start, goal) {
  const cameFrom = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === goal) {
      const route = [];
      for (let at = file; at !== null; at = cameFrom.get(at)) route.unshift(at);
      return route;
    }
    for (const next of importsOf(file)) {
      if (!cameFrom.has(next)) {
        cameFrom.set(next, file);
        queue.push(next);
      }
    }
  }
  return null;
}

/** @type {import('eslint').Rule.RuleModule} */
const noCycleWithTypes = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, type-only imports included' },
    schema: [],
    messages: { cycle: 'Import cycle (type-only imports count): {{route}}' },
  },
  create(context) {
    const file = context.physicalFilename;
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const target = resolveImport(file, node.source.value);
      if (target === null) return;
      const route = importPath(target, file);
      if (route === null) return;
      const root = path.dirname(file);
      context.report({
        node: node.source,
        messageId: 'cycle',
        data: { route: [file, ...route].map((step) => path.relative(root, step) || path.basename(step)).join(' -> ') },
      });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export default { rules: { 'no-cycle-with-types': noCycleWithTypes } };
