/**
 * The process groups of running CLI turns: killing one, and killing every
 * one when the host process exits.
 *
 * This is the one process-wide state of troupe, because what it guards is
 * process-wide: when the host exits, its children must go too. It is empty,
 * and installs nothing, while no CLI turn runs. While one runs, signal-exit
 * watches the host's exit and its fatal signals; it removes its listeners
 * when the last turn ends. A host that handles a signal itself keeps doing
 * so (the children are then killed when it exits); a host that does not
 * still dies of the signal, as it would have without troupe.
 * Internal to troupe: no entry point exports the module as a whole.
 * @module
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { onExit } from 'signal-exit';

const running = new Set<ChildProcess>();
let stopWatching: (() => void) | undefined;

/** Kill `child` and everything it started (its process group), also after `child` itself has exited. */
export function killGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (process.platform === 'win32') {
    // Not run on Windows here: taskkill /T ends the process tree (the shim's cmd.exe and what it started).
    const result = spawnSync('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' });
    if (result.status !== 0 && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return;
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone (every member has exited).
  }
}

/** Kill `child`'s group if the host exits while it runs. Call {@link release} when the turn is over. */
export function watch(child: ChildProcess): void {
  running.add(child);
  stopWatching ??= onExit(() => {
    for (const c of running) killGroup(c);
    running.clear();
    stopWatching = undefined;
  });
}

/** The turn of `child` is over: stop watching it; the last one removes the exit and signal listeners. */
export function release(child: ChildProcess): void {
  running.delete(child);
  if (running.size === 0 && stopWatching) {
    const stop = stopWatching;
    stopWatching = undefined;
    stop();
  }
}
