// An L-shaped mounting bracket with two bolt holes and a fillet-like
// stiffening rib: thin features, curved holes, graded mesh near them.
// gmsh -3 -format msh22 -setnumber h 0.04 bracket.geo
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.04, Name "mesh size"} ];
Box(1) = {0, 0, 0, 2.0, 1.0, 0.2};     // base plate
Box(2) = {0, 0, 0, 0.2, 1.0, 1.2};     // upright plate
Wedge(3) = {0.2, 0.45, 0.2, 0.6, 0.1, 0.6};  // rib
BooleanUnion(4) = { Volume{1}; Delete; }{ Volume{2}; Volume{3}; Delete; };
Cylinder(5) = {1.4, 0.3, -0.1, 0, 0, 0.4, 0.12};
Cylinder(6) = {1.4, 0.7, -0.1, 0, 0, 0.4, 0.12};
Cylinder(7) = {-0.1, 0.5, 0.85, 0.4, 0, 0, 0.15};
BooleanDifference{ Volume{4}; Delete; }{ Volume{5}; Volume{6}; Volume{7}; Delete; }
Mesh.CharacteristicLengthMax = h;
Mesh.CharacteristicLengthMin = h / 3;
Mesh.CharacteristicLengthFromCurvature = 1;
