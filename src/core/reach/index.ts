/**
 * Reaching the person: one queue of what needs them across every workspace on the machine, and
 * the channels that tell them outside the editor.
 */
export * from './needs-you';
export * from './channels';
export * from './deliver';
export * from './formats';
export * from './notices';
export * from './notifier';
export * from './outbox';
export * from './sender';
