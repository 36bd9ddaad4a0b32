"""How soon ``arena bot --challenge`` asks again: one definition for the challenger
(clients/bot/challenges.py) and for ``--help`` (kept free of heavy imports)."""

#: seconds before challenging again after a challenge ended unanswered (not a flood);
#: doubled after each decline in a row, up to :data:`AGAIN_AT_MOST_S`
AGAIN_AFTER_S = 1.0
AGAIN_AT_MOST_S = 30.0
#: the longest wait before challenging again a player who is not online (doubled from
#: :data:`AGAIN_AFTER_S` while they are not): short, as they may come online any moment
OFFLINE_AT_MOST_S = 8.0
#: seconds a challenge sent waits for its answer before it is taken back and sent again
#: (an answer can be lost: the server tells connected sessions only)
ANSWER_WAIT_S = 60.0
