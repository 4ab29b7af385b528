import purgeExpiredHeads from '../../../lua/includes/purge-expired-heads.lua';
import reclaimExpiredPermits from '../../../lua/includes/reclaim-expired-permits.lua';

/**
 * Lua shared by several scripts, by the name a script includes it with: a line
 * `--- @include "<name>"` is replaced by the file's text when the script is defined (Redis scripts
 * cannot load one another, and copies would drift apart).
 */
export const INCLUDES: Readonly<Record<string, string>> = Object.freeze({
  'purge-expired-heads': purgeExpiredHeads,
  'reclaim-expired-permits': reclaimExpiredPermits,
});
