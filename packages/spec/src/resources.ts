import { z } from 'zod';
import { quoteForMessage } from './param-value';
import { SlurmTime } from './slurm-time';
import { renderTemplate } from './template';

/** Most nodes one run may ask for. */
export const MAX_NODES_PER_RUN = 10_000;

/**
 * resources.nodes from a parameter — exactly one placeholder, `"{{nodes}}"` — for a campaign that
 * sweeps the node count (examples/multinode-cpu.yaml): each configuration's value must be a whole
 * number of nodes, checked for every configuration when the campaign is created (nodesIssue).
 */
const NodesTemplate = z
  .string()
  .regex(/^\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/, { error: (iss) => `${quoteForMessage(String(iss.input))} is not a node count: a whole number, or one parameter as "{{nodes}}"` });

function pattern(re: RegExp, what: string) {
  return z.string().regex(re, { error: (iss) => `${quoteForMessage(String(iss.input))} is not ${what}` });
}

/** What each run asks Slurm for. Values land in `#SBATCH` directives, which the shell never reads. */
export const Resources = z
  .strictObject({
    partition: pattern(/^[A-Za-z0-9_.-]{1,64}$/, 'a partition name (letters, digits, _ . -)').optional(),
    nodes: z
      .union([z.int().min(1).max(MAX_NODES_PER_RUN), NodesTemplate])
      .default(1)
      .describe('nodes per run: a whole number, or "{{parameter}}" to sweep the node count (each configuration\'s value a whole number of nodes)'),
    ntasksPerNode: z.int().min(1).max(1024).optional(),
    cpusPerTask: z.int().min(1).max(1024).optional(),
    gpusPerNode: z.int().min(0).max(64).optional(),
    mem: pattern(/^[0-9]+[KMGT]?$/, 'a Slurm memory size: a number with an optional K, M, G or T, e.g. "64G"').optional(),
    time: SlurmTime.default('01:00:00'),
    // A feature expression such as "gh200&(ib|roce)"; safe because it only ever appears in an #SBATCH line.
    constraint: pattern(/^[A-Za-z0-9_&|()[\]*:,.!-]{1,256}$/, 'a Slurm constraint expression').optional(),
    // Whole nodes by default: node-level sensors (module, Grace, RAPL package) measure every job on
    // the node, so an energy figure is only a run's own when no other job shares its nodes.
    exclusive: z.boolean().default(true).describe('whole nodes (sbatch --exclusive); false lets other jobs share the nodes, and their energy then shows in node-level sensors (runs flagged shared_node)'),
  })
  .prefault({});
export type Resources = z.infer<typeof Resources>;

/** The nodes one configuration's runs ask for. Throws (TemplateError, or Error for a value that is no node count): nodesIssue reports that at creation. */
export function runNodes(resources: Pick<Resources, 'nodes'>, parameters: Readonly<Record<string, string | number | boolean>>): number {
  if (typeof resources.nodes === 'number') return resources.nodes;
  const text = renderTemplate(resources.nodes, parameters);
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isInteger(n) || n < 1 || n > MAX_NODES_PER_RUN) {
    throw new Error(`resources.nodes is ${quoteForMessage(text)}, not a whole number of nodes from 1 to ${MAX_NODES_PER_RUN}`);
  }
  return n;
}

/** Why one configuration's resources.nodes is no node count (its message names the configuration); null when it is one. */
export function nodesIssue(resources: Pick<Resources, 'nodes'>, configurationKey: string, parameters: Readonly<Record<string, string | number | boolean>>): { path: string; message: string } | null {
  try {
    runNodes(resources, parameters);
    return null;
  } catch (err) {
    return { path: 'resources.nodes', message: `configuration ${configurationKey}: ${(err as Error).message}` };
  }
}
