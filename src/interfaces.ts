import { analyticsInterface } from "./analytics/routes";
import { pagesInterface } from "./app/pages";
import { appInterface } from "./app/routes";
import { signInInterface } from "./app/sign-in";
import { controlPlaneInterface } from "./control-plane/routes";
import type { ApiInterface } from "./http/route";
import { mcpInterface } from "./mcp/routes";
import { membersInterface } from "./members/routes";
import { discoveryInterface } from "./oauth/discovery";
import { oauthInterface } from "./oauth/routes";
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
  pagesInterface,
  appInterface,
  signInInterface,
  mcpInterface,
  discoveryInterface,
  oauthInterface,
];

/** `GET /openapi.json`: analytics, members, health. */
export const publicDocument = () => buildDocument(INTERFACES, "public");

/** `GET /internal/v1/openapi.json`: the control plane, the webhooks and the web app. */
export const internalDocument = () => buildDocument(INTERFACES, "internal");
