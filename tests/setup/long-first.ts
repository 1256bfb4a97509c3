/**
 * The Docker suites run two at a time; on a fresh clone vitest has no durations yet and starts
 * the largest files first, which can leave the longest suite for last and one lane idle while it
 * runs. These suites are known to take minutes (figures from CI runs, docs/decisions.md), so
 * they start first, longest first; the rest keep vitest's order.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LONG_FIRST = [
  "tests/docker/profiles-120.docker.test.ts",
  "tests/docker/remote-providers.docker.test.ts",
  "apps/web/src/app.docker.test.ts",
  "tests/compose/compose.docker.test.ts",
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projectAt = new Map<string, number>();
    for (const [index, spec] of sorted.entries())
      if (!projectAt.has(spec.project.name)) projectAt.set(spec.project.name, index);
    const rank = (spec: TestSpecification) => {
      const index = LONG_FIRST.findIndex((suffix) => spec.moduleId.endsWith(suffix));
      return index === -1 ? LONG_FIRST.length : index;
    };
    // Projects stay where vitest put them; Array.prototype.sort is stable, so files outside the
    // list keep vitest's order too.
    return sorted.sort(
      (a, b) =>
        (projectAt.get(a.project.name) ?? 0) - (projectAt.get(b.project.name) ?? 0) || rank(a) - rank(b),
    );
  }
}
