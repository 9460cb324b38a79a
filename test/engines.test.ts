// The Node.js floor the README and package.json name (`engines.node`) is one every installed package
// accepts, so a dependency that needs a newer Node fails here rather than on an operator's machine.
// Packages that declare a newer Node than they need are listed, each with why, and the test says
// when an entry is no longer needed.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.js';

/** Declares `node >=22` but is plain JavaScript with no imports (checked for cookie@2.0.2). */
const DECLARES_MORE_THAN_IT_NEEDS = new Map([['cookie', '>=22']]);

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

function installedPackages(dir = join(ROOT, 'node_modules')): { name: string; version: string; node?: string }[] {
  const found = [];
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (entry.startsWith('@')) { found.push(...installedPackages(path)); continue; }
    const manifest = join(path, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = readJson(manifest);
    found.push({ name: pkg.name, version: pkg.version, node: pkg.engines?.node });
    const nested = join(path, 'node_modules');
    if (existsSync(nested)) found.push(...installedPackages(nested));
  }
  return found;
}

describe('the Node.js floor (engines.node)', () => {
  const floor = semver.minVersion(readJson(join(ROOT, 'package.json')).engines.node)!.version;

  it('is the one the README names', () => {
    const major = floor.split('.').slice(0, 2).join('.');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`Node.js ${major} or newer`);
  });

  it('is accepted by every installed package, but the listed ones', () => {
    const refusing = installedPackages()
      .filter((pkg) => pkg.node && !semver.satisfies(floor, pkg.node))
      .filter((pkg) => DECLARES_MORE_THAN_IT_NEEDS.get(pkg.name) !== pkg.node)
      .map((pkg) => `${pkg.name}@${pkg.version} needs node ${pkg.node}`);
    expect(refusing).toEqual([]);
  });

  it('lists no package that no longer declares more', () => {
    const installed = installedPackages();
    for (const [name, range] of DECLARES_MORE_THAN_IT_NEEDS) {
      expect(installed.some((pkg) => pkg.name === name && pkg.node === range), `${name} ${range}`).toBe(true);
    }
  });
});
