import type { RouterType } from "itty-router";
import { authenticate } from "../auth/authenticate";
import { AppError } from "../http/errors";
import type { RequestContext } from "../http/request";

const MEMBER_PATH = "/api/v1/organizations/:org/members/:githubUserId";

/** `GET` and `PATCH /api/v1/organizations/{org}/members/{githubUserId}` (contract section 4). */
export function registerMembers(router: RouterType<Request, [RequestContext]>) {
  const notYet = async (request: Request, { env }: RequestContext) => {
    await authenticate(request, env, "members");
    throw new AppError("not_implemented", "Member management is not implemented yet.");
  };
  router.get(MEMBER_PATH, notYet).patch(MEMBER_PATH, notYet);
}
