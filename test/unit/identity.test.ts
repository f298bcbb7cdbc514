import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { claimOf, followRenames, type WaitingRename } from "../../src/directory/identity";

/**
 * The identity rules as plain functions (`directory/identity.ts`), without storage: which
 * organization an object is, and where a chain of renames delivered in any order ends. The
 * webhook tests observe the same through the interfaces.
 */

/** An object's installation: this login and account id, installation 1, installed. */
const at = (login: string, accountId: number | null, installationId = 1, installed = true) => ({
  login,
  accountId,
  installationId,
  installed,
});

describe("claimOf: an object is an organization's by account id, else by login", () => {
  it("no installation: absent; same account: own whatever the login; another account: other", () => {
    expect(claimOf(undefined, ["acme"], 7)).toBe("absent");
    expect(claimOf(at("acme", 7), ["renamed"], 7)).toBe("own");
    expect(claimOf(at("acme", 7), ["acme"], 8)).toBe("other");
  });

  it("an id unknown on either side: the login decides, case-insensitively (ASCII only)", () => {
    expect(claimOf(at("Acme", null), ["ACME"], 7)).toBe("own");
    expect(claimOf(at("acme", 7), ["ACME"])).toBe("own");
    expect(claimOf(at("acme", null), ["new-acme", "acme"])).toBe("own");
    expect(claimOf(at("acme", null), ["other"])).toBe("other");
    expect(claimOf(at("k", null), ["\u212a"])).toBe("other"); // the Kelvin sign is not a K
  });

  it("account unknown here: an installation of the same login under another installation id is another organization's while this one is installed", () => {
    expect(claimOf(at("acme", null, 1), ["acme"], 7, 2)).toBe("other");
    expect(claimOf(at("acme", null, 1), ["acme"], 7, 1)).toBe("own");
    // After its deletion: a reinstall of the same organization.
    expect(claimOf(at("acme", null, 1, false), ["acme"], 7, 2)).toBe("own");
    // The account id known on both sides decides alone (a reinstall of a known account).
    expect(claimOf(at("acme", 7, 1), ["acme"], 7, 2)).toBe("own");
  });
});

/** Delivers the trail's renames in `order`, following the chain after each arrival, as the object does. */
function deliverInOrder(trail: string[], order: number[]) {
  let login = trail[0] as string;
  let waiting: WaitingRename[] = [];
  const seen: string[] = [];
  order.forEach((step, id) => {
    waiting.push({ id, fromKey: (trail[step] as string).toLowerCase(), toLogin: trail[step + 1] as string });
    const next = followRenames(login, waiting);
    waiting = waiting.filter((w) => !next.used.includes(w.id));
    login = next.login;
    seen.push(login);
  });
  return { login, seen };
}

describe("followRenames: renames delivered in any order end at the last login", () => {
  it("A→B and B→C in reverse: waits at A, then ends at C", () => {
    expect(deliverInOrder(["A", "B", "C"], [1, 0])).toEqual({ login: "C", seen: ["A", "C"] });
  });

  it("A→B and back B→A in reverse: ends at A", () => {
    expect(deliverInOrder(["A", "B", "A"], [1, 0])).toEqual({ login: "A", seen: ["A", "A"] });
  });

  it("any trail of renames over a few logins (revisits and case changes included), in any order of arrival", () => {
    const logins = ["acme", "Acme", "beta", "gamma", "delta"];
    const trail = fc
      .array(fc.constantFrom(...logins), { minLength: 1, maxLength: 8 })
      .map((steps) => {
        const path = ["acme"];
        for (const s of steps) if (s !== path.at(-1)) path.push(s);
        return path;
      })
      .filter((path) => path.length >= 2);
    fc.assert(
      fc.property(
        trail.chain((path) =>
          fc.tuple(fc.constant(path), fc.shuffledSubarray([...path.keys()].slice(0, -1), { minLength: path.length - 1 })),
        ),
        ([path, order]) => {
          const { login, seen } = deliverInOrder(path, order);
          // Logins compare case-insensitively (a case-only rename keeps the same key; with one inside
          // a cycle the display case of the end may come from another visit of that login).
          const folded = path.map((l) => l.toLowerCase());
          expect(login.toLowerCase()).toBe(folded.at(-1));
          // On the way it only ever answers under a login the organization really had.
          for (const s of seen) expect(folded).toContain(s.toLowerCase());
        },
      ),
    );
  });
});
