"""PPO update whose generalized advantage estimate is computed one rollout step at a
time in a Python loop, on [n_env] tensors that live on the GPU.

Imitates: uwrobotics/uwrt_arm_rl:PPO/utils/CalcReturns.py (calc_returns: buffers made
with torch.zeros(...).to(device), then `for irow in reversed(range(n_step))` computing
the TD error and the GAE update on per-step GPU tensors).
"""
import os, sys, torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
N_STEP = int(os.environ.get("ROLLOUT_STEPS", "2048"))
N_ENV = 16
OBS_DIM = 32


def calc_advantages(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    n_step, n_env = rewards.shape
    advantages = torch.zeros(n_step, n_env).to(values.device)
    not_done = 1.0 - dones
    gae = torch.zeros(n_env).to(values.device)
    next_values = last_value
    for t in reversed(range(n_step)):
        delta = rewards[t] + gamma * next_values * not_done[t] - values[t]
        gae = delta + gamma * lam * not_done[t] * gae
        advantages[t] = gae
        next_values = values[t]
    return advantages, advantages + values


def main():
    torch.manual_seed(0)
    critic = torch.nn.Sequential(
        torch.nn.Linear(OBS_DIM, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1)
    ).to(device)
    optimizer = torch.optim.Adam(critic.parameters(), lr=3e-4)

    for update in range(5):
        # rollout buffers, as a vectorized env would have filled them
        obs = torch.randn(N_STEP + 1, N_ENV, OBS_DIM, device=device)
        rewards = torch.randn(N_STEP, N_ENV, device=device)
        dones = (torch.rand(N_STEP, N_ENV, device=device) < 0.01).float()
        with torch.no_grad():
            all_values = critic(obs).squeeze(-1)
        values, last_value = all_values[:-1], all_values[-1]

        advantages, returns = calc_advantages(rewards, values, dones, last_value)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        value_loss = (critic(obs[:-1]).squeeze(-1) - returns).pow(2).mean()
        optimizer.zero_grad()
        value_loss.backward()
        optimizer.step()
        print(f"update {update}: adv std {advantages.std().item():.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
