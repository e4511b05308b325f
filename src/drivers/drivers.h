// attnlite — the drivers of the encoder-decoder families (internal): each makes a session's
// run state for a model on an op set.
#pragma once
#include <memory>

#include "attnlite/model.h"
#include "drivers/driver.h"

namespace attnlite::drivers {

std::unique_ptr<Seq2SeqDriver> make_transformer_driver(const Model& m, const ops::Ops& op,
                                                       const Limits& lim);
std::unique_ptr<Seq2SeqDriver> make_bahdanau_driver(const Model& m, const ops::Ops& op,
                                                    const Limits& lim);

}  // namespace attnlite::drivers
