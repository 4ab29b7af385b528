import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `command` is an executable on PATH (no process is started). */
export function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
