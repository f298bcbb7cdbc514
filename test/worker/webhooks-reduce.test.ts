import { describe, expect, it } from "vitest";
import { reduceDelivery } from "../../src/webhooks/reduce";
import { example, installationOf } from "./webhook-helpers";

/**
 * The reduction of a verified delivery to the changes the service applies (pure: payload in,
 * messages out), on GitHub's documented example payloads. The mapping tests observe the effects;
 * these pin what travels through the queue.
 */

const changes = (event: string, payload: unknown) => {
  const reduced = reduceDelivery(event, "d-1", payload);
  return reduced.status === "queued" ? reduced.messages.map((m) => ({ org: m.org, event: m.event, change: m.change })) : reduced;
};

describe("what each delivery becomes", () => {
  it("installation created: the installation (created_at as epoch seconds or ISO 8601) and its repositories", () => {
    const seconds = example("installation", "created", "acme");
    expect(changes("installation", seconds)).toEqual([
      {
        org: "acme",
        event: "installation.created",
        change: { kind: "installation_created", installationId: installationOf("acme"), installedAt: 1557933591000 },
      },
      {
        org: "acme",
        event: "installation.created",
        change: { kind: "repositories_added", repositories: [{ id: 186853002, name: "Hello-World", private: false }] },
      },
    ]);
    const iso = example("installation", "suspend", "acme");
    iso.action = "created";
    expect(changes("installation", iso)).toMatchObject([
      { change: { kind: "installation_created", installedAt: Date.parse("2021-04-28T22:32:21.000-04:00") } },
    ]);
  });

  it("installation deleted, suspend, unsuspend; new_permissions_accepted is ignored", () => {
    expect(changes("installation", example("installation", "deleted", "acme"))).toMatchObject([
      { change: { kind: "installation_deleted", installationId: installationOf("acme") } },
    ]);
    // Their times order them when sync is off: suspended_at for a suspend, updated_at for an unsuspend.
    expect(changes("installation", example("installation", "suspend", "acme"))).toMatchObject([
      { change: { kind: "installation_suspended", blocked: true, at: Date.parse("2021-04-29T02:32:50Z") } },
    ]);
    expect(changes("installation", example("installation", "unsuspend", "acme"))).toMatchObject([
      { change: { kind: "installation_suspended", blocked: false, at: Date.parse("2021-04-28T22:32:50.000-04:00") } },
    ]);
    expect(changes("installation", example("installation", "new_permissions_accepted", "acme"))).toMatchObject({
      status: "ignored",
    });
  });

  it("repository transferred: removed from the previous owner named in changes.owner.from, added to the new one", () => {
    const transferred = example("repository", "transferred", "new-owner");
    expect(changes("repository", transferred)).toEqual([
      {
        org: "octocat",
        event: "repository.transferred",
        change: { kind: "repositories_removed", repositories: [{ id: 186853261, name: "Hello-World" }] },
      },
      {
        org: "new-owner",
        event: "repository.transferred",
        change: {
          kind: "repositories_added",
          repositories: [
            {
              id: 186853261,
              name: "Hello-World",
              private: (transferred.repository as { private: boolean }).private,
              // GitHub's updated_at orders visibility when sync is off (contract section 17).
              updatedAt: Date.parse("2019-05-15T15:20:41Z"),
            },
          ],
        },
      },
    ]);
  });

  it("repository created: it joins the installation", () => {
    const created = example("repository", "created", "acme");
    const repository = created.repository as { id: number; name: string; private: boolean };
    expect(changes("repository", created)).toEqual([
      {
        org: "acme",
        event: "repository.created",
        change: {
          kind: "repositories_added",
          repositories: [
            {
              id: repository.id,
              name: repository.name,
              private: repository.private,
              updatedAt: Date.parse("2019-05-15T15:20:41Z"),
            },
          ],
        },
      },
    ]);
  });

  it("organization member_added: GitHub's role admin or member, isBot from the account type", () => {
    const payload = example("organization", "member_added", "acme");
    expect(changes("organization", payload)).toEqual([
      {
        org: "acme",
        event: "organization.member_added",
        change: { kind: "member_added", githubUserId: "39652351", githubLogin: "hacktocat", role: "member", isBot: false },
      },
    ]);
    expect(changes("organization", example("organization", "member_invited", "acme"))).toMatchObject({ status: "ignored" });
  });

  it("organization renamed: the new login is the message's org, changes.login.from the old one", () => {
    const payload = example("organization", "renamed", "acme-new");
    payload.changes = { login: { from: "Acme-Old" } };
    expect(changes("organization", payload)).toEqual([
      { org: "acme-new", event: "organization.renamed", change: { kind: "organization_renamed", from: "Acme-Old" } },
    ]);
    payload.changes = { login: { from: "not a login" } };
    expect(changes("organization", payload)).toMatchObject({
      status: "ignored",
      reason: expect.stringContaining("expected shape"),
    });
    delete payload.changes;
    expect(changes("organization", payload)).toMatchObject({ status: "ignored" });
  });

  it("every message carries the owner's GitHub account id (the identity that survives renames)", () => {
    const ids = (event: string, payload: unknown) => {
      const reduced = reduceDelivery(event, "d-1", payload);
      return reduced.status === "queued" ? reduced.messages.map((m) => m.accountId) : reduced;
    };
    const renamed = example("organization", "renamed", "acme", 0, 4242);
    renamed.changes = { login: { from: "old-acme" } };
    expect(ids("installation", example("installation", "created", "acme", 0, 4242))).toEqual([4242, 4242]);
    expect(ids("installation_repositories", example("installation_repositories", "added", "acme", 0, 4242))).toEqual([4242]);
    expect(ids("repository", example("repository", "privatized", "acme", 0, 4242))).toEqual([4242]);
    expect(ids("member", example("member", "added", "acme", 0, 4242))).toEqual([4242]);
    expect(ids("organization", example("organization", "member_added", "acme", 0, 4242))).toEqual([4242]);
    expect(ids("organization", renamed)).toEqual([4242]);
    expect(ids("pull_request", example("pull_request", "opened", "acme", 0, 4242))).toEqual([4242]);
    // Transferred: the previous owner's id, as changes.owner.from names it, then the new owner's.
    const transferred = example("repository", "transferred", "new-owner", 0, 1);
    transferred.changes = { owner: { from: { organization: { login: "old-owner", id: 4242 } } } };
    expect(ids("repository", transferred)).toEqual([4242, 1]);
  });

  it("every message carries the installation that sent it (payload installation.id), when the owner's", () => {
    const sentBy = (event: string, payload: unknown) => {
      const reduced = reduceDelivery(event, "d-1", payload);
      return reduced.status === "queued" ? reduced.messages.map((m) => m.installationId) : reduced;
    };
    expect(sentBy("installation", example("installation", "created", "acme", 0, 4242, 77))).toEqual([77, 77]);
    expect(sentBy("organization", example("organization", "member_added", "acme", 0, 4242, 77))).toEqual([77]);
    expect(sentBy("pull_request", example("pull_request", "opened", "acme", 0, 4242, 77))).toEqual([77]);
    expect(sentBy("member", example("member", "added", "acme", 0, 4242, 77))).toEqual([77]);
    // None in the payload (or not a valid id): none in the message; the delivery is still queued.
    const unsent = example("organization", "member_added", "acme", 0, 4242);
    delete unsent.installation;
    expect(sentBy("organization", unsent)).toEqual([undefined]);
    unsent.installation = { id: "77" };
    expect(sentBy("organization", unsent)).toEqual([undefined]);
    // Transferred: the new owner's installation sent it; it proves nothing about the previous owner.
    const transferred = example("repository", "transferred", "new-owner", 0, 1, 77);
    transferred.changes = { owner: { from: { organization: { login: "old-owner", id: 4242 } } } };
    expect(sentBy("repository", transferred)).toEqual([undefined, 77]);
  });

  it("pull_request: the fields the export needs, versioned by updated_at, with the repository's id", () => {
    expect(changes("pull_request", example("pull_request", "opened", "acme"))).toEqual([
      {
        org: "acme",
        event: "pull_request.opened",
        change: {
          kind: "pull_request",
          repositoryId: 186853002,
          event: {
            type: "pull_request",
            org: "acme",
            repo: "Hello-World",
            prNumber: 2,
            author: "Codertocat",
            createdAt: "2019-05-15T15:20:33Z",
            mergedAt: null,
            linesAdded: 1,
            linesDeleted: 1,
            updatedAt: "2019-05-15T15:20:33Z",
          },
        },
      },
    ]);
  });

  it("a payload without the documented shape, or an owner that is not a GitHub login, is ignored", () => {
    expect(changes("pull_request", { action: "opened", pull_request: {} })).toMatchObject({
      status: "ignored",
      reason: expect.stringContaining("expected shape"),
    });
    expect(changes("pull_request", example("pull_request", "opened", "not a login"))).toMatchObject({ status: "ignored" });
  });
});
