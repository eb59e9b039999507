-- Ids listed in a reply, at most (MAX_REPORTED_IDS in src/sweep/GroupSweepResult.ts): the first ones are
-- enough to look at, and a reply must stay small however many there are.
local MAX_REPORTED_IDS = 20
