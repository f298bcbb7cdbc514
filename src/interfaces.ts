import { analyticsInterface } from "./analytics/routes";
import { controlPlaneInterface } from "./control-plane/routes";
import type { ApiInterface } from "./http/route";
import { mcpInterface } from "./mcp/routes";
import { membersInterface } from "./members/routes";
import { buildDocument } from "./openapi/documents";
import { operationsInterface } from "./operations/routes";
import { webhooksInterface } from "./webhooks/routes";

/** Every interface the Worker serves: the router and both OpenAPI documents come from this list. */
export const INTERFACES: readonly ApiInterface[] = [
  operationsInterface,
  analyticsInterface,
  membersInterface,
  controlPlaneInterface,
  webhooksInterface,
  mcpInterface,
];

/** `GET /openapi.json`: analytics, members, health. */
export const publicDocument = () => buildDocument(INTERFACES, "public");

/** `GET /internal/v1/openapi.json`: the control plane and the webhooks. */
export const internalDocument = () => buildDocument(INTERFACES, "internal");
