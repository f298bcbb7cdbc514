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

/** A delivery's sender: account id and sending installation (null: a message queued before it was carried). */
const from = (accountId: number | null, installationId: number | null = null) => ({ accountId, installationId });

describe("claimOf: an object is an organization's by account id, else by login", () => {
  it("no installation: absent; same account: own whatever the login; another account: other", () => {
    expect(claimOf(undefined, ["acme"], from(7))).toBe("absent");
    expect(claimOf(at("acme", 7), ["renamed"], from(7))).toBe("own");
    expect(claimOf(at("acme", 7), ["acme"], from(8))).toBe("other");
    // The account id known on both sides decides alone (a reinstall of a known account).
    expect(claimOf(at("acme", 7, 1), ["acme"], from(7, 2))).toBe("own");
  });

  it("no account id named (a call of the control plane, an old message): the login decides, case-insensitively (ASCII only)", () => {
    expect(claimOf(at("acme", 7), ["ACME"])).toBe("own");
    expect(claimOf(at("acme", null), ["new-acme", "acme"])).toBe("own");
    expect(claimOf(at("acme", null), ["other"])).toBe("other");
    expect(claimOf(at("k", null), ["\u212a"])).toBe("other"); // the Kelvin sign is not a K
    expect(claimOf(at("Acme", null), ["ACME"], from(null))).toBe("own");
    // An old installation message of another installation id while this one is installed.
    expect(claimOf(at("acme", null, 1), ["acme"], from(null, 2))).toBe("other");
    expect(claimOf(at("acme", null, 1, false), ["acme"], from(null, 2))).toBe("own");
  });

  it("account unknown here: a delivery naming an account id is own only from the installation held here", () => {
    expect(claimOf(at("Acme", null, 1), ["ACME"], from(7, 1))).toBe("own");
    // Another installation under the same login: another organization's (the takeover of issue 22).
    expect(claimOf(at("acme", null, 1), ["acme"], from(7, 2))).toBe("other");
    expect(claimOf(at("acme", null, 1, false), ["acme"], from(7, 2))).toBe("other");
    // No installation id to prove it (a message queued before installation ids were carried).
    expect(claimOf(at("acme", null, 1), ["acme"], from(7))).toBe("other");
    // The right installation under another login is still not this object's (the login is checked first).
    expect(claimOf(at("acme", null, 1), ["other"], from(7, 1))).toBe("other");
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
