-- Sequential suites (issue 16 §2): a suite run may add repetitions while its verdict is undecided.
-- look: the looks taken (0 until the first judgment); each look that adds repetitions moves it on
-- by one with a compare-and-set, so two schedulers judging the same run add them once.
-- sequential: the latest look as @erg/suites records it (SequentialRunView without runsUsed);
-- null for a fixed-design suite.
ALTER TABLE "suite_runs" ADD COLUMN "look" INTEGER NOT NULL DEFAULT 0, ADD COLUMN "sequential" JSONB;
