"""The wild corpus (tests/fixtures/wild): logs as users pasted them, scored like /work/shared/eval/score.py."""
