// @erg/format — how erg presents figures to people, in the CLI and in the web app: one module, so
// a figure reads the same wherever it is shown. Pure and dependency-free (it is bundled for browsers).
export * from './units';
export * from './csv';
export * from './results';
export * from './provenance';
export * from './claims';
export * from './cooldown';
export * from './validity';
