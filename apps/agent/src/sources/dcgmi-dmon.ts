import type { Quantity } from '../wire';

// What erg asks `dcgmi dmon` and how it reads the answer. dcgmi (DCGM's CLI, dcgmi/DeviceMonitor.cpp)
// prints a table: a header line `#Entity` and each field's short name, a units line `ID`, then one
// row per entity and sample (`GPU 0`, values), the header again every 14 samples. Columns are
// fixed-width and left-aligned — the entity column 16 characters, each field its format's width
// + 8 — and a field an entity has no value for is printed as blanks (or `N/A` when blank), so a row
// is cut at the header's column starts, not split at spaces.

export interface DcgmField {
  id: number;
  /** The column's name in the header (DCGM's short name). */
  shortName: string;
  quantity: Quantity;
}

/**
 * The profiling fields of data movement (dcgm_fields.h), each a rate in B/s: DCGM reads them from
 * the GPU's performance monitors (NVML GPM in MiB/s, scaled to bytes by DCGM's cache manager).
 * PCIe and NVLink count header and payload; for C2C the `ALL` fields (header and payload) are
 * asked, as NVML's C2C sensors count the same (nvml-links.ts). tx is what leaves the GPU
 * (device-to-host for PCIe).
 */
export const DCGM_FIELDS: readonly DcgmField[] = [
  { id: 1009, shortName: 'PCITX', quantity: 'pcie_tx' }, // DCGM_FI_PROF_PCIE_TX_BYTES
  { id: 1010, shortName: 'PCIRX', quantity: 'pcie_rx' }, // DCGM_FI_PROF_PCIE_RX_BYTES
  { id: 1011, shortName: 'NVLTX', quantity: 'nvlink_tx' }, // DCGM_FI_PROF_NVLINK_TX_BYTES
  { id: 1012, shortName: 'NVLRX', quantity: 'nvlink_rx' }, // DCGM_FI_PROF_NVLINK_RX_BYTES
  { id: 1076, shortName: 'C2CTXAB', quantity: 'c2c_tx' }, // DCGM_FI_PROF_C2C_TX_ALL_BYTES
  { id: 1078, shortName: 'C2CRXAB', quantity: 'c2c_rx' }, // DCGM_FI_PROF_C2C_RX_ALL_BYTES
];

/** `-e 1009,1010,…` */
export const fieldsArg = (fields: readonly DcgmField[]) => fields.map((f) => f.id).join(',');

/** Where each column begins in the lines under a header, and the short names in it. */
export interface DmonHeader {
  names: string[];
  /** Start of each field's column (the entity column is before the first). */
  starts: number[];
}

/** The column layout of a `#Entity …` header line; null for any other line. */
export function parseDmonHeader(line: string): DmonHeader | null {
  if (!line.startsWith('#Entity')) return null;
  const names: string[] = [];
  const starts: number[] = [];
  const re = /\S+/g;
  re.lastIndex = '#Entity'.length;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    names.push(m[0]);
    starts.push(m.index);
  }
  return { names, starts };
}

/** One `GPU <id> …` row: the GPU's DCGM id and each column's value (NaN for N/A or blank); null for any other line. */
export function parseDmonRow(line: string, header: DmonHeader): { gpu: number; values: number[] } | null {
  const entity = /^GPU (\d+)\s/.exec(line);
  if (!entity) return null;
  const values = header.starts.map((from, j) => {
    const to = header.starts[j + 1] ?? line.length;
    const cell = line.slice(from, to).trim();
    return cell === '' || cell === 'N/A' ? Number.NaN : Number(cell);
  });
  return { gpu: Number(entity[1]), values };
}

/** Every GPU row of a whole answer (the probe's `-c N`), each value by its column's name; `tables`: how many headers it had. */
export function parseDmonOutput(output: string): { tables: number; rows: { gpu: number; values: Record<string, number> }[] } {
  let header: DmonHeader | null = null;
  let tables = 0;
  const rows: { gpu: number; values: Record<string, number> }[] = [];
  for (const line of output.split('\n')) {
    const h = parseDmonHeader(line);
    if (h) {
      header = h;
      tables += 1;
    } else if (header) {
      const row = parseDmonRow(line, header);
      if (row) rows.push({ gpu: row.gpu, values: Object.fromEntries(header.names.map((n, j) => [n, row.values[j] as number])) });
    }
  }
  return { tables, rows };
}
