/**
 * The interaction contract: issuing it (`quota should-run`), previewing it without a write,
 * checking it, running what it lists (`exec`), a whole turn, and the end-of-turn summary.
 */
export * from './exec';
export * from './issue';
export * from './issued';
export * from './preview';
export * from './summary';
export * from './turn';
