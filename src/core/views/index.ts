/**
 * The read documents every surface shows (status, records, history, export), their shapes, and
 * text made for people.
 */
export * from './dashboard-links';
export * from './dashboard-protocol';
export * from './denials-doc';
export * from './drive-status-doc';
export * from './gate-facts';
export * from './everywhere';
export * from './goal-export';
export * from './goal-history';
export * from './lane-text';
export * from './markdown-text';
export * from './needs-you-doc';
export * from './next-commands';
export * from './notify-doc';
export * from './people-text';
export * from './policy-advice';
export * from './quoted-text';
export * from './records';
export * from './records-doc';
export * from './should-run-doc';
export * from './status';
export * from './status-doc';
export * from './text-diff';
export * from './when-text';
export * from './output-schemas';
