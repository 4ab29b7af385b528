/**
 * Runs `start`, turning a synchronous throw (bad input, closed client) into a rejection. In a module
 * of its own: the handle, the lock and the kinds use it, and none of them may import another's.
 */
export function rejectingThrows<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}
