import { z } from 'zod';
import { quoteForMessage } from './param-value';

// Option values are written into `#SBATCH --flag=value` lines. This set has no meaning to sbatch's
// directive parser or to the shell, and leaves out `%` so Slurm's filename patterns cannot appear.
const OPTION_VALUE = /^[A-Za-z0-9_.,:=+@/-]{1,128}$/;

const optionValue = z.string().regex(OPTION_VALUE, {
  error: (iss) =>
    `${quoteForMessage(String(iss.input))} is not an allowed sbatch option value: use 1 to 128 letters, digits and _ . , : = + @ / -`,
});

const shape = {
  account: optionValue.optional(),
  qos: optionValue.optional(),
  reservation: optionValue.optional(),
  wckey: optionValue.optional(),
  gpuFreq: optionValue.optional(),
  cpuFreq: optionValue.optional(),
  gpuBind: optionValue.optional(),
  distribution: optionValue.optional(),
  hint: optionValue.optional(),
  licenses: optionValue.optional(),
  threadsPerCore: z.int().min(1).max(64).optional(),
  signal: optionValue.optional(),
};
export type SlurmOptionKey = keyof typeof shape;

/** The sbatch flag each allow-listed option becomes; the renderer writes `#SBATCH <flag>=<value>`. */
export const SLURM_OPTION_FLAGS: Readonly<Record<SlurmOptionKey, `--${string}`>> = {
  account: '--account',
  qos: '--qos',
  reservation: '--reservation',
  wckey: '--wckey',
  gpuFreq: '--gpu-freq',
  cpuFreq: '--cpu-freq',
  gpuBind: '--gpu-bind',
  distribution: '--distribution',
  hint: '--hint',
  licenses: '--licenses',
  threadsPerCore: '--threads-per-core',
  signal: '--signal',
};

const ALLOWED = Object.keys(shape).join(', ');

/**
 * Extra sbatch options, allow-listed: anything that could redirect output, change the working
 * directory, wrap the script or run it as someone else (`chdir`, `output`, `wrap`, `uid`, …) is
 * left out on purpose, because erg owns those.
 */
export const SlurmOptions = z.strictObject(shape, {
  error: (iss) => {
    if (iss.code !== 'unrecognized_keys') return undefined;
    const names = iss.keys.map((k) => JSON.stringify(k)).join(', ');
    return iss.keys.length === 1
      ? `sbatch option ${names} is not allowed; allowed: ${ALLOWED}`
      : `sbatch options ${names} are not allowed; allowed: ${ALLOWED}`;
  },
});
export type SlurmOptions = z.infer<typeof SlurmOptions>;
