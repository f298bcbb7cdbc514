/** A small client of the `/internal/v1` control plane for the seed, start and benchmark scripts. */
export function controlPlaneClient(baseUrl, adminToken) {
  const base = baseUrl.replace(/\/+$/, "");
  async function request(method, path, body) {
    let lastError;
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${adminToken}`,
            ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        // A 5xx, or a body the Worker did not receive in time (its 10 s body deadline, reached when
        // CI's side-by-side servers starve each other of CPU): the request was not applied, send it again.
        if ((res.status >= 500 || (res.status === 400 && text.includes("did not arrive completely"))) && attempt < 3) {
          lastError = new Error(`${method} ${path} → ${res.status}: ${text}`);
          continue;
        }
        if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
        return text === "" ? undefined : JSON.parse(text);
      } catch (error) {
        if (error instanceof Error && /→ 4\d\d/.test(error.message)) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }
  return {
    request,
    putOrganization: (login, body) => request("PUT", `/internal/v1/organizations/${encodeURIComponent(login)}`, body),
    putRepository: (org, name, body) =>
      request("PUT", `/internal/v1/organizations/${encodeURIComponent(org)}/repositories/${encodeURIComponent(name)}`, body),
    putMember: (org, id, body) => request("PUT", `/internal/v1/organizations/${encodeURIComponent(org)}/members/${id}`, body),
    putUser: (id, body) => request("PUT", `/internal/v1/users/${id}`, body),
    createKey: (id, kind) => request("POST", `/internal/v1/users/${id}/api-keys`, { kind }),
    postEvents: (events) => request("POST", "/internal/v1/events", { events }),
  };
}

/**
 * Waits until `GET /healthz` answers, or gives up after `timeoutMs`, or as soon as `alive()` says
 * the server's process is gone (no point waiting two minutes for a server that exited).
 */
export async function waitForHealthy(baseUrl, timeoutMs = 60_000, alive = () => true) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`${baseUrl}: the server exited before it became healthy`);
    try {
      const res = await fetch(`${baseUrl.replace(/\/+$/, "")}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${baseUrl} did not become healthy within ${timeoutMs / 1000} s`);
}
