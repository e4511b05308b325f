// attnlite — what a model does, and the session that does it: Translate (Translator,
// translate.h: the Transformer and Bahdanau families), Generate (Generator, generate.h: the
// language model), Classify (Classifier, classify.h: the Vision Transformer).
#pragma once

namespace attnlite {

enum class Task { Translate, Generate, Classify };

}  // namespace attnlite
