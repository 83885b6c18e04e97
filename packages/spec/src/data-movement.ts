import { z } from 'zod';
import { LINK_KINDS, TRANSFER_DIRECTIONS } from './sensors';
import { Summary } from './summary';

/**
 * Data movement joined to energy (issue 15 §3, issue 28 §3): the bytes a run moved over each
 * link — PCIe, NVLink, NVLink-C2C, host memory, InfiniBand ports, network interfaces — integrated from the agents' B/s sensors over the workload
 * window, what each gigabyte cost in the run's energy, how much of the GPUs' busy time overlapped
 * with transfers, and the bytes of each phase beside its energy. @erg/energy computes it
 * (computeRunDataMovement); GET /v1/runs/:id/energy shows it as `dataMovement`.
 *
 * Words:
 *   link       one device's traffic of one kind on one node: `gpu0` over PCIe, `memory1` (an L3
 *              domain's memory traffic), `ib0` (an InfiniBand port), `nic0` (a network
 *              interface). Its sensors are `<device>.<quantity>` (DATA_MOVEMENT_QUANTITIES).
 *   direction  tx / rx from the device's view (tx leaves the GPU, or the node), read / write for
 *              memory, `total` where the interface does not split them (resctrl's mbm_total_bytes).
 *   bytes      the counted directions (COUNTED_DIRECTIONS): every direction measured, except over
 *              inter-node links (infiniband, network), which count what the nodes sent — each
 *              byte between two of the run's nodes once, summed over nodes.
 *   GB         10⁹ bytes (decimal), as link bandwidths are quoted.
 *   busy       a GPU moment whose utilisation exceeds the busy threshold; overlapped when, at the
 *              same moment, its links together move more than the rate threshold.
 */

export const LinkKind = z.enum(LINK_KINDS);
export type LinkKind = z.infer<typeof LinkKind>;
export const TransferDirection = z.enum(TRANSFER_DIRECTIONS);
export type TransferDirection = z.infer<typeof TransferDirection>;

const DirectionBytes = z
  .partialRecord(TransferDirection, z.number())
  .describe('bytes per direction, only the directions measured: tx/rx for GPU and network links, read/write (or total) for memory');

/** One link's bytes over the window. */
export const LinkBytes = z
  .object({
    node: z.string(),
    device: z.string().describe('the component and index its sensors are named by: gpu0, memory1, ib0 (an InfiniBand port), nic0 (a network interface; the agent’s meta.json names each)'),
    kind: LinkKind,
    bytes: z.number().describe('the counted directions together: all measured (memory: read + write where measured, else total), except infiniband and network: sent (tx) only'),
    byDirection: DirectionBytes,
    sensors: z.array(z.string()).describe('the sensors integrated, e.g. [gpu0.pcie_tx, gpu0.pcie_rx]'),
    sources: z.array(z.string()).describe('where their readings came from (nvml, dcgm, resctrl, …)'),
    coverage: z.number().describe('0–1: the least share of the window any of its sensors covers'),
  })
  .meta({ id: 'LinkBytes' });
export type LinkBytes = z.infer<typeof LinkBytes>;

/** One kind of link over every node and device. */
export const LinkKindMovement = z
  .object({
    kind: LinkKind,
    bytes: z.number().describe('the counted directions (see LinkBytes.bytes), every link of this kind on every node'),
    byDirection: DirectionBytes,
    meanRateBps: z.number().describe('bytes / the window’s length (s): summed over links, so several GPUs add up'),
    joulesPerGB: z.number().nullable().describe('the run’s energyJ / (bytes / 10⁹); null when nothing moved'),
    links: z.number().describe('links (node, device) of this kind measured'),
    coverage: z.number().describe('0–1: the least coverage among its links'),
  })
  .meta({ id: 'LinkKindMovement' });
export type LinkKindMovement = z.infer<typeof LinkKindMovement>;

/** One GPU's busy time and how much of it overlapped with transfers. */
export const GpuTransferOverlap = z
  .object({
    node: z.string(),
    gpu: z.string().describe('gpu0, gpu1, …'),
    busyS: z.number().describe('seconds of the window its utilisation exceeded the busy threshold'),
    overlappedS: z.number().describe('of those, the seconds its links together moved more than the rate threshold'),
    fraction: z.number().nullable().describe('overlappedS / busyS; null when it was never busy'),
  })
  .meta({ id: 'GpuTransferOverlap' });
export type GpuTransferOverlap = z.infer<typeof GpuTransferOverlap>;

/** How much of the GPUs' busy time overlapped with data movement over their links (PCIe, NVLink, C2C). */
export const TransferOverlap = z
  .object({
    utilThresholdPct: z.number().describe('a GPU is busy while gpuN.util is above this (%)'),
    rateThresholdBps: z.number().describe('a GPU is transferring while its links’ rates (every kind and direction) add up to more than this (B/s)'),
    busyS: z.number().describe('GPU-seconds busy, summed over GPUs'),
    overlappedS: z.number().describe('GPU-seconds busy and transferring'),
    fraction: z.number().nullable().describe('overlappedS / busyS; null when no GPU was busy'),
    gpus: z.array(GpuTransferOverlap),
  })
  .meta({ id: 'TransferOverlap' });
export type TransferOverlap = z.infer<typeof TransferOverlap>;

const KindBytes = z.object({ bytes: z.number(), byDirection: DirectionBytes });

/** One phase's bytes beside its energy (the same leaf labels, the same window, as energy per phase). */
export const PhaseDataMovement = z
  .object({
    name: z.string().describe('a phase’s name, or (unmarked) for the time inside none'),
    timeS: z.number().describe('inclusive node-seconds (nested phases included), as in RunPhases'),
    energyJ: z.number().nullable().describe('the phase’s inclusive energy from energy per phase; null where none was attributed'),
    kinds: z.partialRecord(LinkKind, KindBytes).describe('inclusive bytes per link kind: while the phase was open, nested phases included'),
    selfBytes: z.partialRecord(LinkKind, z.number()).describe('exclusive bytes per link kind: while it was the innermost open phase; these and (unmarked) add up to the run’s'),
    joulesPerGB: z.partialRecord(LinkKind, z.number().nullable()).describe('energyJ / (inclusive bytes / 10⁹) per kind; null when nothing moved or no energy was attributed'),
  })
  .meta({ id: 'PhaseDataMovement' });
export type PhaseDataMovement = z.infer<typeof PhaseDataMovement>;

/** A run's data movement over its window. */
export const RunDataMovement = z
  .object({
    timeS: z.number().describe('the window’s length'),
    energyJ: z.number().describe('the run’s energy (computeRunEnergy’s energyJ), which joulesPerGB divides'),
    kinds: z.array(LinkKindMovement).describe('per link kind measured, in the order pcie, nvlink, c2c, memory, infiniband, network'),
    links: z.array(LinkBytes).describe('per node and device, by node, then kind, then device'),
    overlap: TransferOverlap.nullable().describe('null where no GPU has both a utilisation sensor and a link sensor'),
    phases: z.array(PhaseDataMovement).nullable().describe('bytes per phase, by inclusive bytes, the largest first, (unmarked) last; null: the workload marked no phases'),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'RunDataMovement' });
export type RunDataMovement = z.infer<typeof RunDataMovement>;

/** One kind of link's traffic over a configuration's repetitions. */
export const KindMovementSummary = z
  .object({
    kind: LinkKind,
    bytes: Summary.describe('bytes per run (the counted directions, every link of this kind: sent only for infiniband and network); a run that measured this kind and moved nothing counts 0'),
    meanRateBps: Summary.describe('bytes / the run’s window (s), per run'),
    joulesPerGB: Summary.describe('the run’s energy / (its bytes over this kind / 10⁹), per run; runs that moved nothing over it do not count'),
  })
  .meta({ id: 'KindMovementSummary' });
export type KindMovementSummary = z.infer<typeof KindMovementSummary>;

/** One phase's bytes beside its energy over a configuration's repetitions. */
export const PhaseMovementSummary = z
  .object({
    name: z.string().describe('a phase’s name, or (unmarked)'),
    energyJ: Summary.describe('inclusive energy per run, where it was attributed'),
    timeS: Summary.describe('inclusive node-seconds per run (0 in a run where the phase did not occur)'),
    bytes: z.partialRecord(LinkKind, Summary).describe('inclusive bytes per run per link kind (0 in a run where the phase did not occur)'),
  })
  .meta({ id: 'PhaseMovementSummary' });
export type PhaseMovementSummary = z.infer<typeof PhaseMovementSummary>;

/** A configuration's data movement over the repetitions that measured any. */
export const ConfigurationDataMovement = z
  .object({
    key: z.string(),
    n: z.number().describe('runs with data movement counted (their energy counts and a node had a data-movement sensor)'),
    energyJ: Summary.describe('the energy of those runs: what their bytes are set against'),
    kinds: z.array(KindMovementSummary).describe('per link kind any of its runs measured, in the order pcie, nvlink, c2c, memory, infiniband, network'),
    overlapFraction: Summary.describe('per run, the share of GPU busy time overlapped with transfers (runs with an overlap figure)'),
    phases: z.array(PhaseMovementSummary).nullable().describe('bytes and energy per phase, by mean inclusive bytes, the largest first, (unmarked) last; null: no run marked phases'),
  })
  .meta({ id: 'ConfigurationDataMovement' });
export type ConfigurationDataMovement = z.infer<typeof ConfigurationDataMovement>;

/** Data movement per configuration (GET /v1/campaigns/:id/results `dataMovement`). */
export const CampaignDataMovement = z
  .object({
    configurations: z.array(ConfigurationDataMovement).describe('configurations with at least one such run, in the campaign’s order'),
  })
  .meta({ id: 'CampaignDataMovement' });
export type CampaignDataMovement = z.infer<typeof CampaignDataMovement>;
