// The platforms whose kernel-lock binding (fs-native-extensions' prebuilt Node-API binary) is
// copied into dist/prebuilds/ and packed: the ones VS Code runs on. Elsewhere LoopX falls back to
// its exclusive-file lock (src/core/store/lock.ts).
export const LOCK_PLATFORMS = [
  'linux-x64',
  'linux-arm64',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64',
  'win32-arm64',
];
