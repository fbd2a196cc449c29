/**
 * An s3-tests run's junit file read into one result per test, and compared
 * with compat/s3-tests.json: every test passes unless that file explains why
 * it does not, and every explanation is of a test that still fails.
 */
import { XMLParser } from 'fast-xml-parser';

/** The kinds of reasons a test may fail for, as the compatibility page names them. */
export const KINDS = {
  rule: 'a Pail rule',
  feature: 'a feature Pail does not have',
  client: 'a limit of the client here',
};

/** [{name, outcome: 'passed' | 'failed' | 'skipped', message}] from a junit file, sorted by name. */
export function parseJunit(xml) {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    htmlEntities: true,
    isArray: (name) => name === 'testcase' || name === 'testsuite',
  });
  const document = parser.parse(xml);
  const suites = document.testsuites?.testsuite ?? document.testsuite ?? [];
  const results = [];
  for (const suite of suites) {
    for (const testcase of suite.testcase ?? []) {
      const problem = testcase.failure ?? testcase.error;
      const outcome = problem !== undefined ? 'failed' : testcase.skipped !== undefined ? 'skipped' : 'passed';
      const message = problem === undefined ? '' : typeof problem === 'string' ? problem : (problem.message ?? '');
      results.push({ name: testcase.name, outcome, message: firstLine(message) });
    }
  }
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

function firstLine(text) {
  return String(text).split('\n')[0].slice(0, 300);
}

/** ceph/s3-tests' Signature Version 2 tests (marker auth_aws2) all end so; core leaves them out, the page shows them apart. */
export const isSigV2Test = (name) => name.endsWith('_aws2');

/** The area a test belongs to: the first whose pattern its name matches. */
export function areaOf(name, areas) {
  return matchingArea(name, areas)?.name ?? 'Other';
}

function matchingArea(name, areas) {
  return areas.find((area) => new RegExp(area.pattern).test(name));
}

/** The feature area (run with --feature) a test belongs to, if any: core leaves those tests out and counts them apart. */
export const featureAreaOf = (name, areas) => {
  const area = matchingArea(name, areas);
  return area?.feature === undefined ? undefined : area;
};

/** The results of core: neither the Signature Version 2 tests nor a feature area's. */
export const coreResults = (results, areas) => results.filter((result) => !isSigV2Test(result.name) && featureAreaOf(result.name, areas) === undefined);

/** [{area, feature, results}] for each feature area the run has tests of, in the order of the areas. */
export function featureResults(results, areas) {
  return areas
    .filter((area) => area.feature !== undefined)
    .map((area) => ({ area: area.name, feature: area.feature, results: results.filter((result) => featureAreaOf(result.name, areas) === area) }))
    .filter((entry) => entry.results.length > 0);
}

/**
 * What the run says against the explanations: a summary, and the problems
 * that make the page untrue (a failure nobody explained, an explanation of a
 * test that passes, an explanation of an unknown kind). With `partial` (a
 * run of some tests), explanations of tests that did not run are not problems;
 * nor are those of a feature area (`feature`) the run did not ask for (`features`).
 */
export function classify(results, explanations, { partial = false, features = [] } = {}) {
  const failing = explanations.failing;
  const problems = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const byKind = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, 0]));
  for (const result of results) {
    counts[result.outcome] += 1;
    const explained = failing[result.name];
    if (explained && !KINDS[explained.kind]) problems.push(`${result.name}: unknown kind "${explained.kind}"`);
    if (result.outcome === 'failed') {
      if (explained) byKind[explained.kind] = (byKind[explained.kind] ?? 0) + 1;
      else problems.push(`${result.name} fails and the page does not say why: ${result.message}`);
    } else if (result.outcome === 'passed' && explained) {
      problems.push(`${result.name} passes now: remove its explanation from compat/s3-tests.json`);
    }
  }
  if (!partial) {
    const ran = new Set(results.map((result) => result.name));
    const asked = (explained) => explained.feature === undefined || features.includes(explained.feature);
    for (const [name, explained] of Object.entries(failing)) {
      if (!ran.has(name) && asked(explained)) problems.push(`${name} is explained but did not run`);
    }
  }
  const tally = (list) => {
    const of = (outcome) => list.filter((result) => result.outcome === outcome).length;
    return `${list.length} tests, ${of('passed')} passed, ${of('failed')} failed, ${of('skipped')} skipped`;
  };
  const summary = [
    `s3-tests core: ${tally(coreResults(results, explanations.areas))}`,
    `s3-tests Signature Version 2 (auth_aws2): ${tally(results.filter((result) => isSigV2Test(result.name)))}`,
    ...featureResults(results, explanations.areas).map(({ area, feature, results: list }) => `s3-tests ${area} (--feature ${feature}): ${tally(list)}`),
    `failures explained: ${Object.entries(byKind)
      .map(([kind, count]) => `${count} ${KINDS[kind]}`)
      .join(', ')}; unexplained: ${problems.filter((problem) => problem.includes('does not say why')).length}`,
  ];
  return { counts, byKind, problems, summary };
}
