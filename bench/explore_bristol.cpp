// A plain exhaustive depth-first search of Bristol-family deals, in C++ for speed.
//
// Not the solver: a yardstick for it (bench/explore_bristol.py builds and drives it).
// It answers how far a search without the solver's dead-end rules must go to decide a
// deal, at hundreds of thousands of states a second. It keeps only the four cheap
// rules of the solver's docstring (symmetry, safe-foundation, lone-fan, deal-early,
// the last without its "restrict" step) and a table of visited states (a 64-bit hash
// of the canonical key, stored at a slot that a second hash picks). A collision could
// only hide a state: it never invents a win (the driver replays every won line through
// the engine), but it could make a "lost" wrong, so a "lost" here is no proof.
//
// Input, one deal a line: seed, 11 piles (fans then reserves, ranks bottom to top,
// comma-separated, "-" when empty), the foundations' four top ranks, the stock in deal
// order. Output, one line a deal: seed, won/lost/unknown, distinct states, seconds and,
// when won, the line in the spec's notation.
//
// usage: explore_bristol MAX_STATES LOG2_TABLE ORDER  (ORDER: 0 home first, 1 deal
// first, 2 cards onto fans first; the deal is last in 0 and 2)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kFans = 8;
constexpr int kPiles = 11;  // fans 0-7, reserves 8-10
constexpr int kKing = 13;
const char *const kNames[kPiles] = {"t1", "t2", "t3", "t4", "t5", "t6",
                                    "t7", "t8", "r1", "r2", "r3"};

struct State {
  uint8_t card[kPiles][32];  // ranks bottom to top
  uint8_t size[kPiles];
  uint8_t found[4];  // top rank of each foundation, 0 when empty
  uint8_t dealt;     // stock cards dealt so far
  uint8_t may_deal;  // the deal-early flag
};

struct Move {
  int8_t from;  // -1: the deal
  int8_t to;    // -1: home
};

std::vector<uint8_t> g_stock;
int g_order = 0;
uint64_t *g_table = nullptr;
uint64_t g_mask = 0;
uint64_t g_states = 0;
uint64_t g_max_states = 0;
bool g_out_of_states = false;
std::vector<std::string> g_line;

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

bool PileLess(const State &s, int a, int b) {
  int common = std::min(s.size[a], s.size[b]);
  int c = std::memcmp(s.card[a], s.card[b], common);
  return c != 0 ? c < 0 : s.size[a] < s.size[b];
}

// Adds the state's canonical key to the table; false if it was there already.
bool Visit(const State &s) {
  int order[kPiles];
  for (int i = 0; i < kPiles; i++) order[i] = i;
  auto less = [&](int a, int b) { return PileLess(s, a, b); };
  std::sort(order, order + kFans, less);  // fans are interchangeable
  bool stock_out = s.dealt == g_stock.size();
  if (stock_out) std::sort(order + kFans, order + kPiles, less);  // so are reserves then
  uint64_t h1 = 0x9e3779b97f4a7c15ULL, h2 = 0x0123456789abcdefULL;
  auto put = [&](uint64_t v) {
    h1 = Mix(h1 ^ v) + 0x9e37;
    h2 = Mix(h2 * 31 + v + 7);
  };
  for (int i : order) {
    uint64_t word = s.size[i];
    for (int j = 0; j < s.size[i]; j++) {
      word = word * 16 + s.card[i][j];
      if (j % 12 == 11) {
        put(word);
        word = 1;
      }
    }
    put(word);
    put(0xabcdef);  // pile separator
  }
  put(stock_out ? 1000 : s.dealt * 4 + s.may_deal);
  uint64_t key = h1 | 1;  // 0 marks a free slot
  for (uint64_t at = h2 & g_mask;; at = (at + 1) & g_mask) {
    if (g_table[at] == 0) {
      g_table[at] = key;
      g_states++;
      return true;
    }
    if (g_table[at] == key) return false;
  }
}

bool SendHome(State &s, int from) {
  uint8_t r = s.card[from][s.size[from] - 1];
  for (uint8_t &f : s.found) {
    if (f == r - 1) {
      f = r;
      s.size[from]--;
      return true;
    }
  }
  return false;
}

// Rule safe-foundation: a card goes home at once when every card a rank lower is home.
void PlaySafeCards(State &s, std::vector<std::string> &texts) {
  for (bool again = true; again;) {
    again = false;
    uint8_t lowest = *std::min_element(s.found, s.found + 4);
    for (int i = 0; i < kPiles && !again; i++) {
      if (s.size[i] && s.card[i][s.size[i] - 1] <= lowest + 1 && SendHome(s, i)) {
        texts.push_back(std::string(kNames[i]) + "-f");
        if (i >= kFans) s.may_deal = 1;
        again = true;
      }
    }
  }
}

bool Won(const State &s) {
  for (uint8_t f : s.found)
    if (f != kKing) return false;
  return true;
}

int Moves(const State &s, Move *out) {
  Move home[kPiles], reserve[3 * kFans], fan[kFans * kFans];
  int nh = 0, nr = 0, nf = 0, n = 0;
  for (int i = 0; i < kPiles; i++) {
    if (!s.size[i]) continue;
    uint8_t r = s.card[i][s.size[i] - 1];
    if (std::count(s.found, s.found + 4, r - 1)) home[nh++] = {int8_t(i), -1};
    if (i < kFans && s.size[i] == 1) continue;  // rule lone-fan
    for (int j = 0; j < kFans; j++) {
      if (j == i || !s.size[j] || s.card[j][s.size[j] - 1] != r + 1) continue;
      if (i >= kFans)
        reserve[nr++] = {int8_t(i), int8_t(j)};
      else
        fan[nf++] = {int8_t(i), int8_t(j)};
    }
  }
  bool deal = s.dealt < g_stock.size() && s.may_deal;  // rule deal-early
  if (deal && g_order == 1) out[n++] = {-1, -1};
  if (g_order != 2) n = std::copy(home, home + nh, out + n) - out;
  n = std::copy(reserve, reserve + nr, out + n) - out;
  n = std::copy(fan, fan + nf, out + n) - out;
  if (g_order == 2) n = std::copy(home, home + nh, out + n) - out;
  if (deal && g_order != 1) out[n++] = {-1, -1};
  return n;
}

State Play(const State &s, Move m, std::vector<std::string> &texts) {
  State c = s;
  if (m.from < 0) {
    for (int r = kFans; r < kPiles && c.dealt < g_stock.size(); r++)
      c.card[r][c.size[r]++] = g_stock[c.dealt++];
    c.may_deal = 1;
    texts.push_back("deal");
  } else {
    if (m.to < 0) {
      SendHome(c, m.from);
    } else {
      c.card[m.to][c.size[m.to]++] = c.card[m.from][--c.size[m.from]];
    }
    c.may_deal = m.from >= kFans;
    texts.push_back(std::string(kNames[m.from]) + "-" + (m.to < 0 ? "f" : kNames[m.to]));
  }
  PlaySafeCards(c, texts);
  return c;
}

bool Search(const State &s) {
  if (Won(s)) return true;
  if (!Visit(s)) return false;
  if (g_states >= g_max_states) {
    g_out_of_states = true;
    return false;
  }
  Move moves[kPiles * (kFans + 1) + 1];
  int n = Moves(s, moves);
  for (int k = 0; k < n; k++) {
    std::vector<std::string> texts;
    State child = Play(s, moves[k], texts);
    if (Search(child)) {
      g_line.insert(g_line.begin(), texts.begin(), texts.end());
      return true;
    }
    if (g_out_of_states) return false;
  }
  return false;
}

std::vector<uint8_t> Ranks(const char *text) {
  std::vector<uint8_t> out;
  if (text[0] == '-') return out;
  for (char *p = const_cast<char *>(text); *p;) {
    out.push_back(uint8_t(std::strtol(p, &p, 10)));
    if (*p == ',') p++;
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MAX_STATES LOG2_TABLE ORDER < deals\n", argv[0]);
    return 2;
  }
  g_max_states = std::strtoull(argv[1], nullptr, 10);
  int log2_table = std::atoi(argv[2]);
  g_order = std::atoi(argv[3]);
  g_mask = (uint64_t(1) << log2_table) - 1;
  g_table = static_cast<uint64_t *>(std::calloc(g_mask + 1, sizeof(uint64_t)));
  if (!g_table) return 1;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, stdin)) {
    std::memset(g_table, 0, (g_mask + 1) * sizeof(uint64_t));
    g_states = 0;
    g_out_of_states = false;
    g_line.clear();
    State s{};
    std::string seed = std::strtok(buf, " \n");
    for (int i = 0; i < kPiles; i++) {
      std::vector<uint8_t> pile = Ranks(std::strtok(nullptr, " \n"));
      std::copy(pile.begin(), pile.end(), s.card[i]);
      s.size[i] = uint8_t(pile.size());
    }
    std::vector<uint8_t> found = Ranks(std::strtok(nullptr, " \n"));
    std::copy(found.begin(), found.end(), s.found);
    g_stock = Ranks(std::strtok(nullptr, " \n"));
    s.may_deal = 1;
    std::vector<std::string> texts;
    PlaySafeCards(s, texts);
    auto t0 = std::chrono::steady_clock::now();
    bool won = Search(s);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (won) g_line.insert(g_line.begin(), texts.begin(), texts.end());
    std::printf("%s %s %llu %.2f ", seed.c_str(),
                won ? "won" : g_out_of_states ? "unknown" : "lost",
                static_cast<unsigned long long>(g_states), secs);
    for (size_t i = 0; i < g_line.size(); i++)
      std::printf("%s%s", i ? "," : "", g_line[i].c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
