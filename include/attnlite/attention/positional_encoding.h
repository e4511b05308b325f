// d2l 10.6.3: sinusoidal positional encoding, and a learnable positional embedding.
//
// Legend: T positions, H num_hiddens.
#pragma once

namespace attnlite::attention {

// P (max_len, H): P[i, 2j] = sin(i / 10000^(2j/H)), P[i, 2j+1] = cos(...), in float32
// exactly as the book computes it.
void positional_encoding_table(float* P, int max_len, int H);

// x (B, T, H) += P[positions]; positions (T) or nullptr for 0..T-1.
void add_positional_encoding(float* x, const float* P, int B, int T, int H,
                             const int* positions = nullptr);

// Learnable: x (B, T, H) += pos_embedding[0, :T] (shape (1, max_len, H)).
void add_positional_embedding(float* x, const float* pos_embedding, int B, int T, int H);

}  // namespace attnlite::attention
