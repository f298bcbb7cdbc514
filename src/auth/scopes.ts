/** The three scopes of contract section 18, shared by keys and OAuth grants (section 19). */
export const SCOPES = ["analytics:read", "members:read", "members:write"] as const;
export type Scope = (typeof SCOPES)[number];
