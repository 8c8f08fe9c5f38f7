/**
 * What a browser may load of the views (the dashboard webview and the browser dashboard): the
 * message protocol, the shapes of the documents it shows, its links and how a time reads.
 * Nothing here imports Node.
 */
export * from './dashboard-links';
export * from './dashboard-protocol';
export * from './everywhere';
export * from './needs-you-doc';
export * from './status-doc';
export * from './when-text';
