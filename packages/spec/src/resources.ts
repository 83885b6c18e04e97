import { z } from 'zod';
import { quoteForMessage } from './param-value';
import { SlurmTime } from './slurm-time';

function pattern(re: RegExp, what: string) {
  return z.string().regex(re, { error: (iss) => `${quoteForMessage(String(iss.input))} is not ${what}` });
}

/** What each run asks Slurm for. Values land in `#SBATCH` directives, which the shell never reads. */
export const Resources = z
  .strictObject({
    partition: pattern(/^[A-Za-z0-9_.-]{1,64}$/, 'a partition name (letters, digits, _ . -)').optional(),
    nodes: z.int().min(1).max(10_000).default(1),
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
