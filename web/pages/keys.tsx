import { useEffect, useRef, useState } from "preact/hooks";
import { type Answer, api, explain, formatDate, type RequestBody, type Schema, type SessionInfo } from "../api";
import { Layout, Notice } from "../layout";
import { ConnectedApps } from "./connected-apps";

type ApiKey = Schema<"ApiKey"> & { repositories?: string[] };
type Kind = ApiKey["kind"];
type Created = Answer<"/app/api/keys", "POST"> & { repositories?: string[] };
type Expiry = NonNullable<RequestBody<"/app/api/keys", "POST">["expiresInDays"]>;
type CreateBody = {
  kind: Kind;
  name: string;
  readOnly: boolean;
  expiresInDays: Expiry | null;
  allowedNetworks: string[];
  repositories?: string[];
};

/** Where a key list's changes go: the person's own keys, or an organization's (`org-keys.tsx`). */
export interface KeyEndpoints {
  create: (body: CreateBody) => Promise<Created>;
  revoke: (keyId: string) => Promise<void>;
  /** Organization analytics keys may be limited to repositories. */
  repositories: boolean;
}

const OWN_KEYS: KeyEndpoints = {
  create: (body) => api("POST", "/app/api/keys", { body }),
  revoke: async (keyId) => {
    await api("DELETE", "/app/api/keys/{keyId}", { path: { keyId } });
  },
  repositories: false,
};

const KIND_TITLES: Record<Kind, string> = { analytics: "Analytics key", members: "Members key" };
const KIND_USES: Record<Kind, string> = {
  analytics: "the analytics export (Pro organizations)",
  members: "member management and your organizations list",
};
const EXPIRIES: { value: `${Expiry}` | "never"; label: string }[] = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "365", label: "365 days" },
  { value: "never", label: "Never" },
];
const expiresInDays = (choice: string): Expiry | null => (choice === "never" ? null : (Number(choice) as Expiry));
const readOnly = (key: { kind: Kind; scopes: string[] }) => key.kind === "members" && !key.scopes.includes("members:write");

/**
 * `/app/keys` (contract sections 13 and 18): the person's named keys with name, hint, scopes,
 * networks, expiry and last use; create (name, kind, read-only, expiry, networks), regenerate
 * (warned first) and revoke, one key at a time.
 */
export function KeysPage({ session }: { session: SessionInfo }) {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState("");
  const reload = () =>
    api("GET", "/app/api/keys").then(
      (list) => setKeys(list.data),
      (e) => setError(explain(e)),
    );
  useEffect(() => {
    reload();
  }, []);
  return (
    <Layout session={session} title="API keys">
      <p>
        Up to 10 named keys of each kind: one per tool, each revoked alone. A key is shown once, when it is created or
        regenerated: only a hash is stored.
      </p>
      <Notice kind="error" text={error} />
      <h2>Your keys</h2>
      {keys === null ? (
        <p class="loading">Loading…</p>
      ) : keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <div class="cards">
          {keys.map((k) => (
            <KeyCard key={k.keyId} apiKey={k} endpoints={OWN_KEYS} onChange={reload} />
          ))}
        </div>
      )}
      <CreateKey endpoints={OWN_KEYS} onChange={reload} />
      <ConnectedApps />
    </Layout>
  );
}

export function KeyCard({
  apiKey,
  endpoints,
  onChange,
}: {
  apiKey: ApiKey;
  endpoints: KeyEndpoints;
  onChange: () => Promise<void>;
}) {
  const [expiry, setExpiry] = useState("90");
  const [confirming, setConfirming] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "ok"; text: string }>({ kind: "ok", text: "" });
  const [busy, setBusy] = useState(false);
  const expired = apiKey.expiresAt !== null && Date.parse(apiKey.expiresAt) <= Date.now();
  // The warning takes the keyboard's focus when it opens, so it is read before anything is pressed.
  const confirmButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
  }, [confirming]);

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setMessage({ kind: "ok", text: "" });
    try {
      await action();
    } catch (e) {
      setMessage({ kind: "error", text: explain(e) });
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  // Regenerating is creating the key of that kind and name again: same id, scopes and networks, a new value.
  const regenerate = () =>
    run(async () => {
      const body = {
        kind: apiKey.kind,
        name: apiKey.name,
        readOnly: readOnly(apiKey),
        expiresInDays: expiresInDays(expiry),
        allowedNetworks: apiKey.allowedNetworks,
        ...(endpoints.repositories ? { repositories: apiKey.repositories ?? [] } : {}),
      };
      setCreated(await endpoints.create(body));
      await onChange();
    });
  const revoke = () =>
    run(async () => {
      await endpoints.revoke(apiKey.keyId);
      await onChange();
    });

  const id = `key-${apiKey.keyId}`;
  const title = `${KIND_TITLES[apiKey.kind]} ${apiKey.name}`;
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>
        {KIND_TITLES[apiKey.kind]} <span class="key-name">{apiKey.name}</span> <code>{apiKey.hint}</code>
      </h3>
      <dl class="facts">
        <dt>Can</dt>
        <dd>
          {apiKey.kind === "analytics"
            ? "read analytics"
            : readOnly(apiKey)
              ? "read members (read-only)"
              : "read and change members"}
        </dd>
        <dt>Networks</dt>
        <dd>{apiKey.allowedNetworks.length === 0 ? "any address" : apiKey.allowedNetworks.join(", ")}</dd>
        {apiKey.kind === "analytics" && apiKey.repositories !== undefined && (
          <>
            <dt>Repositories</dt>
            <dd>{apiKey.repositories.length === 0 ? "every repository" : apiKey.repositories.join(", ")}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatDate(apiKey.createdAt)}</dd>
        <dt>Expires</dt>
        <dd>
          {formatDate(apiKey.expiresAt)}
          {expired && <strong> (expired)</strong>}
        </dd>
        <dt>Last used</dt>
        <dd>{apiKey.lastUsedAt === null ? "not yet" : `in the hour from ${formatDate(apiKey.lastUsedAt, { hour: true })}`}</dd>
      </dl>
      {created && <NewKey created={created} onDone={() => setCreated(null)} />}
      <Notice kind={message.kind} text={message.text} />
      <div class="actions">
        <label for={`${id}-expiry`}>Expires in</label>
        <select id={`${id}-expiry`} value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
          {EXPIRIES.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <button type="button" disabled={busy} onClick={() => setConfirming(true)}>
          Regenerate key
        </button>
        <button type="button" class="danger" disabled={busy} onClick={revoke} aria-label={`Revoke ${title}`}>
          Revoke
        </button>
      </div>
      {confirming && (
        <div class="confirm" role="alertdialog" aria-labelledby={`${id}-confirm`}>
          <p id={`${id}-confirm`}>
            Regenerate “{apiKey.name}”? The current key stops working at once, everywhere it is used. Your other keys keep
            working.
          </p>
          <button ref={confirmButton} type="button" class="danger" disabled={busy} onClick={regenerate}>
            Regenerate now
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
    </section>
  );
}

/** The form of a new key: name, kind, read-only (members keys), expiry, allowed networks. */
export function CreateKey({ endpoints, onChange }: { endpoints: KeyEndpoints; onChange: () => Promise<void> }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Kind>("analytics");
  const [readOnlyKey, setReadOnly] = useState(false);
  const [expiry, setExpiry] = useState("90");
  const [networks, setNetworks] = useState("");
  const [repositories, setRepositories] = useState("");
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError("");
    try {
      const list = (text: string) =>
        text
          .split(/[\s,]+/)
          .map((n) => n.trim())
          .filter((n) => n !== "");
      const body: CreateBody = {
        kind,
        name,
        readOnly: kind === "members" && readOnlyKey,
        expiresInDays: expiresInDays(expiry),
        allowedNetworks: list(networks),
        ...(endpoints.repositories ? { repositories: kind === "analytics" ? list(repositories) : [] } : {}),
      };
      setCreated(await endpoints.create(body));
      setName("");
      setNetworks("");
      setRepositories("");
      await onChange();
    } catch (e) {
      setError(explain(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card create-key" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <form onSubmit={submit} class="key-form">
        <label for="new-key-name">Name</label>
        <input
          id="new-key-name"
          required
          maxLength={64}
          value={name}
          placeholder="nightly job"
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="new-key-kind">Kind</label>
        <select id="new-key-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="analytics">Analytics (cak_): {KIND_USES.analytics}</option>
          <option value="members">Members (cbk_): {KIND_USES.members}</option>
        </select>
        <label class="check">
          <input
            type="checkbox"
            checked={kind === "members" && readOnlyKey}
            disabled={kind !== "members"}
            onChange={(e) => setReadOnly(e.currentTarget.checked)}
          />
          Read-only (members keys: reads only, no seat or role changes)
        </label>
        <label for="new-key-expiry">Expires in</label>
        <select id="new-key-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
          {EXPIRIES.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <label for="new-key-networks">Allowed networks (optional)</label>
        <textarea
          id="new-key-networks"
          rows={2}
          value={networks}
          placeholder="192.0.2.0/24, 2001:db8::/32"
          aria-describedby="new-key-networks-help"
          onInput={(e) => setNetworks(e.currentTarget.value)}
        />
        <p id="new-key-networks-help" class="muted">
          Up to 20 CIDR ranges, IPv4 or IPv6, separated by commas or lines. Empty: any address.
        </p>
        {endpoints.repositories && (
          <>
            <label for="new-key-repositories">Repositories (analytics keys, optional)</label>
            <input
              id="new-key-repositories"
              value={repositories}
              disabled={kind !== "analytics"}
              placeholder="api, web"
              onInput={(e) => setRepositories(e.currentTarget.value)}
            />
          </>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      <Notice kind="error" text={error} />
      {created && <NewKey created={created} onDone={() => setCreated(null)} />}
    </section>
  );
}

/** The key, this once, with a copy button and the warning. */
export function NewKey({ created, onDone }: { created: Created; onDone: () => void }) {
  const [copied, setCopied] = useState("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied("Copied to the clipboard.");
    } catch {
      setCopied("Could not copy: select the key and copy it yourself.");
    }
  };
  return (
    <section class="new-key" aria-label="Your new key">
      <p class="warning">
        <strong>Copy your new key now: it will not be shown again.</strong>
      </p>
      <code class="secret" data-testid={`new-key-${created.kind}`}>
        {created.key}
      </code>
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy key
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
      <Notice kind="ok" text={copied} />
      <TryIt created={created} />
    </section>
  );
}

/**
 * A command that works as shown: the members key lists your organizations; the analytics key
 * exports from the first organization you may export (one read of your organizations).
 */
function TryIt({ created }: { created: Created }) {
  const [org, setOrg] = useState<string | null | undefined>(created.kind === "analytics" ? undefined : null);
  useEffect(() => {
    if (created.kind !== "analytics") return;
    api("GET", "/app/api/orgs").then(
      (page) => setOrg(page.data.find((o) => o.canExportAnalytics)?.org ?? null),
      () => setOrg(null),
    );
  }, [created.kind]);
  if (org === undefined) return null;
  const path =
    created.kind === "members"
      ? "/api/v1/organizations"
      : `/api/analytics/v1/prs?org=${encodeURIComponent(org ?? "YOUR_ORG")}&perPage=5`;
  return (
    <div class="try-it">
      <p>Try it{created.allowedNetworks.length > 0 ? " (from an allowed network)" : ""}:</p>
      <code class="secret" data-testid={`curl-${created.kind}`}>
        {`curl -s -H "Authorization: Bearer ${created.key}" "${location.origin}${path}"`}
      </code>
      {created.kind === "analytics" && org === null ? (
        <p>None of your organizations is on the Pro plan: the export answers 403 until one is.</p>
      ) : null}
    </div>
  );
}
