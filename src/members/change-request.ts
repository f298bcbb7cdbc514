import { clientAddress } from "../auth/authenticate";
import type { KeyHolder } from "../auth/user-object";
import type { RequestContext } from "../http/route";
import type { ChangeRequest } from "../organization/answers";

/**
 * What a change's audit entries record of its request (contract section 18): the correlation id,
 * the key that made it (none for the app's session) and the caller's address.
 */
export const changeRequest = (key: KeyHolder | null, { correlationId, request }: RequestContext): ChangeRequest => ({
  correlationId,
  key: key === null ? null : { id: key.id, name: key.name },
  ip: clientAddress(request),
});
