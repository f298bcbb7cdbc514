import { useEffect, useRef, useState } from "preact/hooks";
import { type Answer, api, explain, formatDate, type RequestBody, type SessionInfo } from "../api";
import { Layout, Notice } from "../layout";
import { ConnectedApps } from "./connected-apps";

type KeyList = Answer<"/app/api/keys", "GET">;
type Kind = keyof KeyList;
type Created = Answer<"/app/api/keys", "POST">;
type Expiry = NonNullable<RequestBody<"/app/api/keys", "POST">["expiresInDays"]>;

const KINDS: { kind: Kind; title: string; prefix: string; use: string }[] = [
  { kind: "analytics", title: "Analytics key", prefix: "cak_", use: "the analytics export (Pro organizations)" },
  { kind: "members", title: "Members key", prefix: "cbk_", use: "member management and your organizations list" },
];
const EXPIRIES: { value: `${Expiry}` | "never"; label: string }[] = [
  { value: "7", label: "7 days" },
  { value: "30", label: "30 days" },
  { value: "90", label: "90 days" },
  { value: "365", label: "365 days" },
  { value: "never", label: "Never" },
];

/** `/app/keys`: for each kind none or the key's dates; create, regenerate (warned first), revoke. */
export function KeysPage({ session }: { session: SessionInfo }) {
  const [keys, setKeys] = useState<KeyList | null>(null);
  const [error, setError] = useState("");
  const reload = () => api("GET", "/app/api/keys").then(setKeys, (e) => setError(explain(e)));
  useEffect(() => {
    reload();
  }, []);
  return (
    <Layout session={session} title="API keys">
      <p>
        One key of each kind. A new key replaces the previous one, which stops working at once. Keys are shown once, when created:
        only a hash is stored.
      </p>
      <Notice kind="error" text={error} />
      {keys === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <div class="cards">
          {KINDS.map((k) => (
            <KeyCard key={k.kind} {...k} summary={keys[k.kind]} onChange={reload} />
          ))}
        </div>
      )}
      <ConnectedApps />
    </Layout>
  );
}

function KeyCard(props: {
  kind: Kind;
  title: string;
  prefix: string;
  use: string;
  summary: KeyList[Kind];
  onChange: () => Promise<void>;
}) {
  const { kind, title, prefix, use, summary } = props;
  const [expiry, setExpiry] = useState("90");
  const [confirming, setConfirming] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [message, setMessage] = useState<{ kind: "error" | "ok"; text: string }>({ kind: "ok", text: "" });
  const [busy, setBusy] = useState(false);
  const expired = summary?.expiresAt != null && Date.parse(summary.expiresAt) <= Date.now();
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
  const create = () =>
    run(async () => {
      const expiresInDays = expiry === "never" ? null : (Number(expiry) as Expiry);
      setCreated(await api("POST", "/app/api/keys", { body: { kind, expiresInDays } }));
      await props.onChange();
    });
  const revoke = () =>
    run(async () => {
      await api("DELETE", "/app/api/keys/{kind}", { path: { kind } });
      setCreated(null);
      setMessage({ kind: "ok", text: `${title} revoked: it no longer works.` });
      await props.onChange();
    });

  const id = `key-${kind}`;
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        {title} <code>{prefix}…</code>
      </h2>
      <p class="muted">For {use}.</p>
      {summary === null ? (
        <p>No key.</p>
      ) : (
        <dl class="facts">
          <dt>Created</dt>
          <dd>{formatDate(summary.createdAt)}</dd>
          <dt>Expires</dt>
          <dd>
            {formatDate(summary.expiresAt)}
            {expired && <strong> (expired)</strong>}
          </dd>
          <dt>Last used</dt>
          <dd>
            {summary.lastUsedAt === null ? "not yet" : `in the hour from ${formatDate(summary.lastUsedAt, { hour: true })}`}
          </dd>
        </dl>
      )}
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
        {summary === null ? (
          <button type="button" disabled={busy} onClick={create}>
            Create key
          </button>
        ) : (
          <>
            <button type="button" disabled={busy} onClick={() => setConfirming(true)}>
              Regenerate key
            </button>
            <button type="button" class="danger" disabled={busy} onClick={revoke}>
              Revoke
            </button>
          </>
        )}
      </div>
      {confirming && (
        <div class="confirm" role="alertdialog" aria-labelledby={`${id}-confirm`}>
          <p id={`${id}-confirm`}>
            Regenerate the {title.toLowerCase()}? The current key stops working at once, everywhere it is used.
          </p>
          <button ref={confirmButton} type="button" class="danger" disabled={busy} onClick={create}>
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

/** The key, this once, with a copy button and the warning. */
function NewKey({ created, onDone }: { created: Created; onDone: () => void }) {
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
      <p>Try it:</p>
      <code class="secret" data-testid={`curl-${created.kind}`}>
        {`curl -s -H "Authorization: Bearer ${created.key}" "${location.origin}${path}"`}
      </code>
      {created.kind === "analytics" && org === null ? (
        <p>None of your organizations is on the Pro plan: the export answers 403 until one is.</p>
      ) : null}
    </div>
  );
}
