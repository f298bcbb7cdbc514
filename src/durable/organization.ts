// Until `durable/directory.ts` moves (another branch): its import of this path keeps working. Delete at merge.
export type { PutOrganizationResult } from "../organization/answers";
