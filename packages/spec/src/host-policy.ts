import { z } from 'zod';

/**
 * A project's allowances of internal hosts: which hosts of erg's own network (loopback, private,
 * link-local, … — see @erg/address-policy) an admin lets erg reach on the project's behalf. One
 * grammar for every such list; each use has its own list (the webhook policy's in suite.ts, the
 * cluster policy here), so that allowing SSH to a host does not allow POSTs to it, or the reverse.
 */

/** Most entries one allow-list may hold (each one is matched on every connection). */
export const MAX_ALLOW_HOSTS = 64;

/** A list of internal hosts an admin allows: names, *.suffixes, IP addresses, CIDR blocks. */
export function allowHostsList(description: string) {
  return z
    .array(
      z
        .string()
        .min(1)
        .max(253)
        .regex(/^[A-Za-z0-9.:*_\/-]+$/, { error: 'a host name (ci.internal, *.ci.internal), an IP address or a CIDR block (10.20.0.0/16, fd00:1::/64)' }),
    )
    .max(MAX_ALLOW_HOSTS)
    .default([])
    .describe(description);
}

/**
 * Which internal hosts a project's clusters may be, set by an admin (PUT
 * /v1/projects/{name}/cluster-policy): the login node, or the first jump host when there are
 * any — the hosts the scheduler and the API connect to themselves. By default none: public
 * addresses only, checked on the addresses a name resolves to at every connection.
 */
export const ClusterPolicy = z
  .object({
    allowHosts: allowHostsList(
      "internal hosts the project's clusters may be (login nodes, or first jump hosts) although their addresses are not public: host names (exact, or *.suffix " +
        'for any name below it), IP addresses or CIDR blocks. A name listed here may resolve to any address; any other name only to public ones or ones inside a listed block.',
    ),
  })
  .strict()
  .meta({ id: 'ClusterPolicy' });
export type ClusterPolicy = z.output<typeof ClusterPolicy>;

export const ClusterPolicyView = ClusterPolicy.extend({ project: z.string() }).meta({ id: 'ClusterPolicyView' });
