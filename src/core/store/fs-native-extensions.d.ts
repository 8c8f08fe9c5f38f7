// The part of fs-native-extensions LoopX uses (the package ships no types): the lock store/lock.ts takes.
declare module 'fs-native-extensions' {
  /** Takes an exclusive lock on the open file `fd` without waiting: false when another holds it. */
  export function tryLock(fd: number): boolean;
}
