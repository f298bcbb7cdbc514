/** The three scopes (contract section 18), in words a person decides on. */
export type Scope = "analytics:read" | "members:read" | "members:write";

export const SCOPE_TEXT: Record<Scope, string> = {
  "analytics:read": "read pull request analytics (the export and the summary) of organizations you can see.",
  "members:read": "read your organizations, their members and their audit logs.",
  "members:write": "change seats and roles where you are an admin, with the same guards as the app.",
};
